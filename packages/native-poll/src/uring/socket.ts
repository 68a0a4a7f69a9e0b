/**
 * A socket of the uring backend: its fd and the generation that names its
 * requests, the requests it has in flight, and per role what completions
 * left for its operations — a stream's received bytes and its send in
 * flight, a listener's accepted connections.
 */
import type { Backend } from "@bobbin/unix";
import type { BufferOp, Parked } from "@bobbin/unix/backend";
import { RawSocket } from "../raw/socket.js";

/** @internal What a socket asks of its backend's requests (`UringIo`) to receive: its recv kept going, its buffers given back. */
export interface ReceivingIo {
  /** Received bytes a connection may hold before its recv is paused. */
  readonly readAhead: number;
  bufferOf(chunk: Uint8Array): number;
  giveBuffer(bid: number): void;
  armRecv(s: UringSocket): void;
  pauseRecv(s: UringSocket): void;
}

/** @internal */
export class UringSocket extends RawSocket<Backend & { readonly io: ReceivingIo }> {
  /** This fd's generation in the backend: part of every request's user data. */
  gen = 0;
  /** Requests in flight whose last completion has not come (the fd is closed only once this is 0). */
  requests = 0;
  /** Closed by the program; the fd goes once no request is in flight. */
  closing = false;

  // -- receiving (streams: a multishot recv into provided buffers, read ahead,
  // queued in the record: see ReceiveQueue) --
  /** A multishot recv is in flight. */
  recvArmed = false;
  /** The recv ended for want of provided buffers: it is armed again when one comes back. */
  recvStarved = false;

  // -- accepting (a multishot accept, a few connections ahead; one at a time once shared) --
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
  sendOwner: Parked<unknown> | null = null;
  /** The send in flight was cancelled: what it did not send is given up. */
  sendCancelled = false;
  /** The error of a send whose write had returned, thrown by the next `write`. */
  sendError: Error | null = null;
  /** The write in progress: it owns the sending side until its last byte is staged. */
  writing: Parked<unknown> | null = null;
  /** `shutdown("send")` waits for the send in flight. */
  shutPending = false;

  // -- readiness polls (connect, UDP) --
  pollIn = false;
  pollOut = false;

  /** The write operation reused while idle (the read's: `keptRead`). */
  writeOp: BufferOp<void> | null = null;

  /** Read ahead up to the mark, then paused until `read` catches up. */
  protected override get highWater(): number {
    return this.backend.io.readAhead;
  }

  /** A buffer was read to its end (or dropped): it goes back to the kernel. */
  protected override releaseChunk(chunk: Uint8Array): void {
    const io = this.backend.io;
    io.giveBuffer(io.bufferOf(chunk));
  }

  /** At the mark, the recv is cancelled until `read` catches up (what lands meanwhile is kept). */
  protected override pauseSource(): void {
    this.backend.io.pauseRecv(this);
  }

  protected override resumeSource(): void {
    this.backend.io.armRecv(this);
  }

  /** A read found nothing: the recv is armed, if it is not. */
  protected override wanted(): void {
    this.backend.io.armRecv(this);
  }

  /** A send is in flight. */
  get sending(): boolean {
    return this.sendSlot >= 0;
  }
}
