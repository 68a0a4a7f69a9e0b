/**
 * The uring backend's operations, each a `Parked` iterator: they complete
 * in the task's fiber when they can (a connection already accepted, a
 * staging slot free), and otherwise park until a completion wakes them.
 * Reads are the kit's `ReadOp` over the stream's received-chunk queue.
 */
import { type Address, SocketClosed } from "@bobbin/unix";
import { systemError } from "@bobbin/unix/backend";
import { SocketOp, StreamWriteOp, TakeOp } from "../raw/ops.js";
import { receive } from "./datagram.js";
import { takeConnection } from "./listener.js";
import type { SlotWaiter, UringIo } from "./requests.js";
import type { UringSocket } from "./socket.js";
import { sendPiece } from "./stream.js";

/**
 * `write`: the bytes are copied into staging slots and sent one piece at a
 * time (one SEND in flight per socket keeps them in order); the write
 * returns once its last piece is on its way, and an error of that piece is
 * thrown by the socket's next `write`. Writes to one socket never
 * interleave: the write in progress owns the sending side until its last
 * piece is queued, later writes wait behind it. Each socket keeps one to
 * reuse while it is idle.
 */
export class WriteOp extends StreamWriteOp<UringSocket, UringIo> implements SlotWaiter {
  /** Waiting for a staging slot rather than on the socket. */
  #forSlot = false;

  override init(buf: Uint8Array, off: number, len: number): this {
    this.#forSlot = false;
    return super.init(buf, off, len);
  }

  protected attempt(): boolean {
    const s = this.sock;
    const io = this.io;
    this.#forSlot = false;
    if (s.state === "closed") throw new SocketClosed("write()");
    if (!this.takeTurn()) return false;
    while (this.done < this.len) {
      if (s.sendError !== null) throw s.sendError;
      if (s.sendShut) throw systemError("EPIPE", "write", "the socket was shut down for sending");
      if (s.sending) return false; // the piece before is still in flight
      const n = Math.min(this.len - this.done, io.ring.stagingSize);
      const last = this.done + n === this.len;
      if (!sendPiece(io, s, this.buf, this.off + this.done, n, last ? null : this)) {
        this.#forSlot = true;
        return false;
      }
      this.done += n;
    }
    return true;
  }

  protected override wait(): void {
    if (this.#forSlot) this.io.slotWaiters.add(this);
    else super.wait();
  }

  /** Cancelled mid-write: the piece in flight, if it is this write's, is given up. */
  protected override leave(): void {
    if (this.sock.sendOwner === this) this.io.abortSend(this.sock);
    if (this.#forSlot) {
      this.io.slotWaiters.leave(this);
      this.release();
    } else {
      super.leave();
    }
  }
}

/** `accept`: a connection the multishot accept took. */
export class AcceptOp extends TakeOp<UringSocket, [UringSocket, Address], UringIo> {
  protected take(): [UringSocket, Address] | null {
    return takeConnection(this.io, this.sock);
  }
}

/** `recvfrom`: one datagram and its sender; a one-shot poll when none is there. */
export class RecvOp extends TakeOp<UringSocket, [number, Address], UringIo> {
  protected take(): [number, Address] | null {
    return receive(this.io, this.sock, this.buf, this.off, this.len);
  }
}

/**
 * `close`: the socket is closed for the program at once; the operation
 * returns once its fd is closed, after a send still in flight (whose write
 * returned) completed. Given up (cancelled, timed out), it cancels that send.
 */
export class CloseOp extends SocketOp<UringSocket, void, UringIo> {
  protected attempt(): boolean {
    this.io.close(this.sock);
    return this.sock.fd < 0;
  }

  protected wait(): void {
    this.sock.closers.add(this);
  }

  protected leave(): void {
    this.sock.closers.leave(this);
    this.io.abortSend(this.sock);
  }
}
