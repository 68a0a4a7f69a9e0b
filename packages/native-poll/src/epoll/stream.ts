/**
 * What a connected stream of the native backend does besides its system
 * calls: bytes the poller's batch read ahead for its first reader, handed
 * over in order, and small writes queued in the poller to go out with the
 * next call into the addon, with what the kernel did not take kept ahead of
 * every later write.
 */
import type { ShutdownCommand } from "@bobbin/unix";
import { errnoException } from "../errno.js";
import { Poller } from "../poller.js";
import { wouldBlock } from "../raw/io.js";
import type { EpollIo } from "./io.js";
import { type NativeSocket, type Reader, STAGE_MAX } from "./socket.js";

const NOT_SENT = Poller.NOT_SENT;

/** @internal The batch read for the socket's first reader (the only one the poller reads for: see `syncWant`). */
export function takeAhead(io: EpollIo, s: NativeSocket, read: number, at: number): void {
  const reader = s.firstReader as Reader;
  if (!reader.wanted || reader.takeAhead === undefined) {
    throw new Error(`native backend: bytes were read ahead for ${s} but no read waits for them`);
  }
  reader.takeAhead(read, io.poller.readArea, at);
  s.delivered = reader;
  io.wakeReader(s);
}

/** @internal The reader woken with read-ahead bytes returns them (or fails): the readers behind it go on. */
export function releaseDelivered(io: EpollIo, s: NativeSocket, reader: Reader): void {
  if (s.delivered !== reader) return;
  s.delivered = null;
  io.syncWant(s);
  io.passRead(s);
}

/** Queues a write's bytes for the next call into the addon; false when they do not fit (the socket's share, or the poller's area). */
function stage(io: EpollIo, s: NativeSocket, buf: Uint8Array, off: number, len: number): boolean {
  const poller = io.poller;
  const queued = hasStaged(io, s) ? s.stagedBytes : 0;
  if (queued + len > STAGE_MAX || len === 0) return false;
  const index = poller.stats.sends + poller.staged;
  if (!poller.stage(s.fd, buf, off, len)) return false;
  s.lastStaged = index;
  s.stagedBytes = queued + len;
  return true;
}

/**
 * @internal Queues a write's bytes when nothing of the socket's is left
 * unsent (nor an error to throw) and the kernel's buffer had room at the
 * last look: what a write that finds the sending side free does first.
 */
export function stageNow(io: EpollIo, s: NativeSocket, buf: Uint8Array, off: number, len: number): boolean {
  return s.sendError === null && s.unsent === null && s.writable && stage(io, s, buf, off, len);
}

/** @internal Whether `s` has queued sends not submitted yet. */
export function hasStaged(io: EpollIo, s: NativeSocket): boolean {
  return s.lastStaged >= io.poller.stats.sends;
}

/**
 * @internal What a queued send did not send joins the socket's unsent
 * bytes, in order (an error ends the stream's sending: thrown by the next write).
 */
export function sendReturned(io: EpollIo, s: NativeSocket, result: number, unsent: Uint8Array): void {
  if (s.sendError !== null) return;
  if (result >= 0 || result === NOT_SENT || wouldBlock(result)) {
    s.writable = false;
    keepUnsent(io, s, unsent);
  } else {
    s.sendError = errnoException(result, "write");
    unsentGone(io, s);
  }
}

/**
 * Appends a queued send's rest to the socket's unsent bytes, in a room of
 * `STAGE_MAX` bytes that the first rest of a submission takes from the
 * backend's spares: every byte the socket had queued fits in it (it queues
 * no more, and none while it holds unsent bytes), so each rest is copied
 * once and a writer that backs up again and again allocates nothing
 * (joining the rests anew each time made 63 MiB of garbage for 160 MiB
 * written in 16 KiB writes).
 */
function keepUnsent(io: EpollIo, s: NativeSocket, rest: Uint8Array): void {
  const held = s.unsent;
  const at = held?.length ?? 0;
  // Past the room's end, this throws a RangeError rather than drop a byte.
  const into =
    held === null ? new Uint8Array(io.unsentRoom(), 0, rest.length) : new Uint8Array(held.buffer, held.byteOffset, at + rest.length);
  into.set(rest, at);
  s.unsent = into;
}

/**
 * @internal Sends what it can of the unsent bytes; true once they are out (or an
 * error ended it, now in `sendError`), false while the socket is not writable.
 */
export function pushUnsent(io: EpollIo, s: NativeSocket): boolean {
  const data = s.unsent!;
  if (!s.writable) return false;
  const n = io.sys.write(s.fd, data, 0, data.length);
  if (n === data.length || (n < 0 && !wouldBlock(n))) {
    if (n < 0) s.sendError = errnoException(n, "write");
    unsentGone(io, s);
    return true;
  }
  if (n > 0) s.unsent = data.subarray(n);
  s.writable = false;
  return false;
}

/** @internal Whether every byte of the writes that returned is out: queued sends are sent now, the unsent bytes as far as they go. */
export function sendsOut(io: EpollIo, s: NativeSocket): boolean {
  if (hasStaged(io, s)) io.poller.flush();
  return s.unsent === null || pushUnsent(io, s);
}

/** The unsent bytes went out (or an error ended them): a pending shutdown happens, waiting closes go on. */
function unsentGone(io: EpollIo, s: NativeSocket): void {
  io.dropUnsent(s);
  if (s.shutPending) shutSend(io, s);
  s.wakeClosers();
}

/** Shuts the sending side down (the unsent bytes, if any, went out first). */
function shutSend(io: EpollIo, s: NativeSocket): void {
  s.shutPending = false;
  if (s.fd >= 0) io.sys.shutdown(s.fd, 1);
}

/** @internal Closes `s` at once: queued sends go out, unsent bytes the kernel does not take now are lost with the fd. */
export function closeNow(io: EpollIo, s: NativeSocket): void {
  if (s.state === "closed") return;
  if (s.fd >= 0) sendsOut(io, s);
  io.close(s);
}

/** @internal `shutdown`: sending after the bytes of the writes that returned; receiving at once. */
export function shutdown(io: EpollIo, s: NativeSocket, how: ShutdownCommand): void {
  if (s.fd < 0) return;
  if (how !== "receive" && !s.sendShut) {
    s.sendShut = true;
    // Writes that returned are not cut off: their bytes go out first.
    if (sendsOut(io, s)) shutSend(io, s);
    else s.shutPending = true;
    s.writers.wakeAll(); // they fail with EPIPE when they retry
  }
  if (how !== "send" && !s.receiveShut) {
    io.sys.shutdown(s.fd, 0);
    s.shutdownReceive(); // its readers wake, and return 0
    io.syncWant(s);
  }
}
