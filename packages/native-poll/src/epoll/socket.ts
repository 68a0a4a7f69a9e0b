/**
 * A socket of the native backend: a raw non-blocking fd in the poller's set,
 * registered once for both directions, edge-triggered, and what the backend
 * last heard of its readiness.
 *
 * Readiness bookkeeping (per direction, `readable`/`writable`):
 * - set by an event (readable: READABLE, HANGUP or ERROR; writable: WRITABLE,
 *   HANGUP or ERROR), and initially;
 * - cleared by `EAGAIN`, by a short read of a stream (the receive queue was
 *   empty: any later arrival is a new edge, so the next read parks without a
 *   system call) unless the peer has hung up, and by a short write (the send
 *   buffer was full).
 * A parked operation is woken only by an event, so a cleared flag is never
 * trusted to stay clear: it only saves the system call that would say EAGAIN.
 *
 * Sending: a small write is staged in the poller's queue and returns; the
 * next call into the addon sends it. What a queued send did not send waits in
 * `unsent`, ahead of every later write, until the socket is writable again;
 * an error of a queued send is thrown by the socket's next `write`.
 */
import type { Backend } from "@bobbin/unix";
import type { BufferOp, LentChunk, Parked } from "@bobbin/unix/backend";
import type { Slot } from "../arena.js";
import { RawSocket } from "../raw/socket.js";

/**
 * @internal What parks on a native socket's receiving side (read, accept,
 * recvfrom, readSlot's wait): the poller reads ahead for the first one when
 * it wants bytes.
 */
export interface Reader extends Parked<unknown> {
  /** Bytes the poller may read for it while it waits (none, or 0: it makes its own system call). */
  readonly wanted?: number;
  /** The batch read `read` bytes (or -errno) for it, at `at` in `area`: they are its own, copied before it wakes (only a reader that wants bytes). */
  takeAhead?(read: number, area: Uint8Array, at: number): void;
}

/**
 * The bytes one socket may have queued at a time: a write that would pass it
 * submits the queue first, and a larger one is sent directly. It bounds what
 * a queued send can leave unsent, which the socket must then copy and hold
 * (a fast writer to a slow reader held up to the whole staging area, 256 KiB).
 * @internal
 */
export const STAGE_MAX = 16 * 1024;

/** @internal */
export class NativeSocket extends RawSocket<Backend> {
  readable = true;
  writable = true;
  /** The peer hung up (or the socket has an error): reads go on until 0/error. */
  hup = false;
  /** The stream write in progress: it owns the sending side until its last byte is out. */
  writing: Parked<unknown> | null = null;
  /** The index (in the poller's count of sends) of this socket's last queued send; -1: none yet. */
  lastStaged = -1;
  /** The bytes of this socket's queued sends (those up to `lastStaged`, while any is not submitted). */
  stagedBytes = 0;
  /** Bytes of returned writes that the kernel did not take yet, sent before anything else. */
  unsent: Uint8Array | null = null;
  /** The error of a queued send, thrown by the next `write`. */
  sendError: Error | null = null;
  /** `shutdown("send")` waits for the unsent bytes. */
  shutPending = false;
  /**
   * A reader woken with bytes the batch read ahead for it, until it returns
   * them: reads asked meanwhile wait behind it, so that the stream's bytes
   * come back in the order the reads return.
   */
  delivered: Reader | null = null;
  /** The slot `readChunk` lent and nobody gave back yet: taken back by the next readChunk and by the close. */
  lent: LentChunk<Slot> | null = null;
  /** A `readChunk` is in progress (one at a time). */
  chunkReading = false;
  /** The write operation reused while idle (the read's: `keptRead`). */
  writeOp: BufferOp<void> | null = null;
}
