/**
 * A socket of the uring backend: its fd, the requests it has in flight, the
 * bytes received ahead of `read`, its queues of parked operations.
 */
import { RawSocket, type Waiter } from "../sockets.js";
import type { UringBackend } from "./backend.js";
import type { WriteOp } from "./ops.js";

/** @internal */
export class UringSocket extends RawSocket<UringBackend> {
  /** This fd's generation in the backend: part of every request's user data. */
  gen = 0;
  /** Requests in flight whose last completion has not come (the fd is closed only once this is 0). */
  requests = 0;

  // -- receiving (streams: multishot recv into provided buffers, read ahead) --
  /** A multishot recv is in flight. */
  recvArmed = false;
  /** Received bytes not read yet reached the cap: the recv is being cancelled until `read` catches up. */
  recvPaused = false;
  /** The recv ended for want of provided buffers: it is armed again when one comes back. */
  recvStarved = false;
  /**
   * Received chunks not read yet: (buffer id, length) pairs from `chunkHead`
   * to `chunkTail`; both go back to 0 when it empties, and the array keeps
   * its size (no allocation per chunk).
   */
  readonly chunks: number[] = [];
  chunkHead = 0;
  chunkTail = 0;
  /** Bytes of the first chunk already read. */
  chunkOff = 0;
  /** Bytes received and not read yet. */
  queued = 0;
  /** The peer ended the stream (after the queued bytes). */
  eof = false;
  /** The error that ended the recv, thrown by the `read` that meets it. */
  readError: Error | null = null;
  receiveShut = false;

  // -- accepting (multishot accept, a few connections ahead; one at a time once shared) --
  acceptArmed = false;
  /**
   * The listener is shared with other domains (given by `share`, or made by
   * `adopt`): it accepts one connection per waiting `accept`, so that the
   * domain waiting longest gets the next one.
   */
  shared = false;
  acceptPaused = false;
  /** Connections accepted and not taken by `accept` yet. */
  readonly accepted: number[] = [];
  /** The error that ended the multishot accept (EMFILE…), thrown by the next `accept`. */
  acceptError: Error | null = null;

  // -- sending (one SEND in flight, from a staging slot) --
  /** The staging slot of the send in flight, or -1. */
  sendSlot = -1;
  sendOff = 0;
  sendLen = 0;
  /** The parked write the send in flight belongs to; null once its write returned (the send is behind it). */
  sendOwner: WriteOp | null = null;
  /** The send in flight was cancelled: what it did not send is given up. */
  sendCancelled = false;
  /** The error of a send whose write had returned, thrown by the next `write`. */
  sendError: Error | null = null;
  /** The write in progress: it owns the sending side until its last byte is staged. */
  writing: WriteOp | null = null;
  sendShut = false;
  /** `shutdown("send")` waits for the send in flight. */
  shutPending = false;

  // -- readiness polls (connect, UDP) --
  pollIn = false;
  pollOut = false;

  /** `close` operations waiting for the fd to go. */
  readonly closers: Waiter[] = [];
  /** Closed by the program; the fd goes once no request is in flight. */
  closing = false;

  /** A send is in flight. */
  get sending(): boolean {
    return this.sendSlot >= 0;
  }
}
