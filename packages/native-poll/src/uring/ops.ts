/**
 * The uring backend's operations, each a `Parked` iterator: they complete
 * in the task's fiber when they can (bytes already received, a connection
 * already accepted, a staging slot free), and otherwise park until a
 * completion wakes them.
 */
import { type Address, SocketClosed } from "@bobbin/unix";
import { systemError } from "@bobbin/unix/backend";
import { errnoException } from "../errors.js";
import type { NativeAddressOut } from "../load.js";
import { EMPTY, ReaderOp, SocketOp, StreamWriteOp, wouldBlock } from "../sockets.js";
import type { UringBackend } from "./backend.js";
import { UringSocket } from "./socket.js";

/** `read`: bytes the multishot recv received ahead; 0 at the end of the stream. */
export class ReadOp extends ReaderOp<UringBackend, UringSocket, number> {
  protected override finished(): void {
    this.buf = EMPTY;
    this.sock.spareRead ??= this;
  }

  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    if (s.state === "closed") throw new SocketClosed("read()");
    if (s.receiveShut) {
      this.value = 0;
      return true;
    }
    if (s.queued !== 0) {
      this.value = b.take(s, this.buf, this.off, this.len);
      if (s.queued !== 0) b.passRead(s);
      return true;
    }
    const error = s.readError;
    if (error !== null) {
      // Thrown once; the stream is over after it.
      s.readError = null;
      s.eof = true;
      throw error;
    }
    if (s.eof) {
      this.value = 0;
      return true;
    }
    b.armRecv(s);
    return false;
  }
}

/**
 * `write`: the bytes are copied into staging slots and sent one piece at a
 * time (one SEND in flight per socket keeps them in order); the write
 * returns once its last piece is on its way, and an error of that piece is
 * thrown by the socket's next `write`. Writes to one socket never
 * interleave: the write in progress owns the sending side until its last
 * piece is queued, later writes wait behind it.
 */
export class WriteOp extends StreamWriteOp<UringBackend, UringSocket> {
  /** Waiting for a staging slot rather than on the socket. */
  private forSlot = false;

  override reuse(buf: Uint8Array, off: number, len: number): this {
    this.forSlot = false;
    return super.reuse(buf, off, len);
  }

  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    this.forSlot = false;
    if (s.state === "closed") throw new SocketClosed("write()");
    if (!this.takeTurn()) return false;
    const ring = b.ring;
    while (this.done < this.len) {
      if (s.sendError !== null) throw s.sendError;
      if (s.sendShut) throw systemError("EPIPE", "write", "the socket was shut down for sending");
      if (s.sending) return false; // the piece before is still in flight
      const slot = ring.takeSlot();
      if (slot < 0) {
        this.forSlot = true;
        return false;
      }
      const n = Math.min(this.len - this.done, ring.stagingSize);
      const from = this.off + this.done;
      ring.staging.set(this.buf.subarray(from, from + n), slot * ring.stagingSize);
      this.done += n;
      b.send(s, slot, n, this.done < this.len ? this : null);
    }
    return true;
  }

  protected override wait(): void {
    if (this.forSlot) this.backend.parkForSlot(this);
    else super.wait();
  }

  /** Cancelled mid-write: the piece in flight, if it is this write's, is given up. */
  protected override leave(): void {
    if (this.sock.sendOwner === this) this.backend.abortSend(this.sock);
    if (this.forSlot) {
      this.backend.unparkForSlot(this);
      this.release();
    } else {
      super.leave();
    }
  }
}

/** `accept`: a connection the multishot accept took. */
export class AcceptOp extends ReaderOp<UringBackend, UringSocket, [UringSocket, Address]> {
  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    if (s.state === "closed") throw new SocketClosed("accept()");
    const fd = s.accepted.shift();
    if (fd !== undefined) {
      const client = new UringSocket(s.kind, b);
      client.state = "connected";
      b.attach(client, fd);
      this.value = [client, b.peerAddress(client)];
      b.passRead(s);
      return true;
    }
    const error = s.acceptError;
    if (error !== null) {
      s.acceptError = null; // EMFILE…: the listener stays, the next accept tries again
      throw error;
    }
    b.armAccept(s);
    return false;
  }
}

/** `recvfrom`: one datagram and its sender; a one-shot poll when none is queued. */
export class RecvOp extends ReaderOp<UringBackend, UringSocket, [number, Address]> {
  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    if (s.state === "closed") throw new SocketClosed("recvfrom()");
    const out: NativeAddressOut = {};
    const n = b.sys.recvfrom(s.fd, this.buf, this.off, this.len, out);
    if (n >= 0) {
      this.value = [n, out as Address];
      return true;
    }
    if (wouldBlock(n)) {
      b.armPoll(s, true);
      return false;
    }
    throw errnoException(n, "recvmsg");
  }
}

/**
 * `close`: the socket is closed for the program at once; the operation
 * returns once its fd is closed, after a send still in flight (whose write
 * returned) completed. Given up (cancelled, timed out), it cancels that send.
 */
export class CloseOp extends SocketOp<UringBackend, UringSocket, void> {
  protected attempt(): boolean {
    this.backend.closeNow(this.sock);
    return this.sock.fd < 0;
  }

  protected wait(): void {
    this.backend.parking.park(this.sock.closers, this);
  }

  protected leave(): void {
    this.backend.parking.unpark(this.sock.closers, this);
    this.backend.abortSend(this.sock);
  }
}
