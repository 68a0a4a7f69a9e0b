/**
 * The native backend's operations, each a `Parked` iterator: they try their
 * system call in the task's fiber first and park only on `EAGAIN`, until
 * the poller's batch says the socket is ready again.
 */
import { type Address, type InetAddress, type Socket, SocketClosed } from "@bobbin/unix";
import { errnoException } from "../errors.js";
import type { NativeAddressOut } from "../load.js";
import { EMPTY, ReaderOp, SocketOp, StreamWriteOp, wouldBlock } from "../sockets.js";
import { Errno } from "../syscalls.js";
import type { NativeBackend } from "./backend.js";
import { NativeSocket } from "./socket.js";

// errno values, negative, read once from the platform.
const { ECONNABORTED, EPROTO } = Errno;
/** A reader's `ahead` when the batch read nothing for it. */
const NOTHING = Number.NEGATIVE_INFINITY;

/** `accept`: one pending connection, taken with `accept4`. */
export class AcceptOp extends ReaderOp<NativeBackend, NativeSocket, [Socket, Address]> {
  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    if (s.state === "closed") throw new SocketClosed("accept()");
    for (;;) {
      if (!s.readable) return false;
      const out: NativeAddressOut = {};
      const fd = b.sys.accept(s.fd, out);
      if (fd >= 0) {
        const client = new NativeSocket(s.kind, b);
        client.state = "connected";
        b.attach(client, fd);
        this.value = [client, s.kind === "unix" ? { path: "" } : (out as InetAddress)];
        b.passRead(s); // more connections may be pending for other acceptors
        return true;
      }
      // None pending (another domain may have taken it: a shared listener).
      if (wouldBlock(fd)) return (s.readable = false);
      // The connection died before we took it: take the next one.
      if (fd === ECONNABORTED || fd === EPROTO) continue;
      throw errnoException(fd, "accept"); // EMFILE, ENFILE…: the listener stays
    }
  }
}

/**
 * `read`: `read(2)` into the caller's buffer; 0 at the end of the stream.
 * Parked, it is read for by the poller's batch (read-ahead): the bytes
 * arrive with the batch and are copied into its buffer before it is woken.
 */
export class ReadOp extends ReaderOp<NativeBackend, NativeSocket, number> {
  /** What the batch read for it: bytes (≥ 0), a negative errno, or -Infinity (nothing yet). */
  private ahead = NOTHING;

  /** Bytes the poller may read for it while it waits. */
  get wanted(): number {
    return this.len;
  }

  /**
   * The batch read for this reader (the first parked on its socket): `read`
   * bytes (or -errno) from `area` at `at`. The caller wakes it next.
   */
  takeAhead(read: number, area: Uint8Array, at: number): void {
    const s = this.sock;
    this.ahead = read;
    if (read <= 0) return;
    this.buf.set(area.subarray(at, at + read), this.off);
    // A short read emptied the receive queue (what was asked: the reader's length, or the area's rest).
    if (read < Math.min(this.len, area.length - at) && !s.hup) s.readable = false;
  }

  /** Over: the socket keeps it for its next `read` (no allocation per read). */
  protected override finished(): void {
    this.buf = EMPTY;
    this.ahead = NOTHING;
    if (this.sock.delivered === this) this.backend.releaseDelivered(this.sock);
    this.sock.spareRead ??= this;
  }

  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") throw new SocketClosed("read()");
    const ahead = this.ahead;
    if (ahead !== NOTHING) {
      this.ahead = NOTHING;
      if (ahead < 0) throw errnoException(ahead, "read");
      this.value = ahead;
      return true;
    }
    // A reader woken with bytes read ahead returns them first (finished() lets this one go on).
    if (s.delivered !== null) return false;
    if (s.receiveShut) {
      this.value = 0;
      return true;
    }
    if (!s.readable) return false;
    const n = this.backend.sys.read(s.fd, this.buf, this.off, this.len);
    if (n >= 0) {
      // A short read emptied the receive queue: the next arrival is a new edge.
      if (n < this.len && n !== 0 && !s.hup) s.readable = false;
      else if (s.readers.length !== 0) this.backend.passRead(s);
      this.value = n;
      return true;
    }
    if (wouldBlock(n)) return (s.readable = false);
    throw errnoException(n, "read");
  }

  protected override wait(): void {
    super.wait();
    this.backend.syncWant(this.sock);
  }

  protected override leave(): void {
    super.leave();
    this.backend.syncWant(this.sock);
  }
}

/**
 * `write`: a small write is staged in the poller's queue and returns at
 * once, sent with the next call into the addon (together with the batch's
 * other sends); a larger one, or one that meets a full send buffer, is
 * `send(2)` until every byte is handed to the kernel. Writes to one socket
 * never interleave and keep their order: the write in progress owns the
 * socket's sending side (`sock.writing`) until its last byte is out, later
 * writes queue behind it, and bytes of earlier writes still queued or unsent
 * go first.
 */
export class WriteOp extends StreamWriteOp<NativeBackend, NativeSocket> {
  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    if (s.state === "closed") throw new SocketClosed("write()");
    if (!this.takeTurn()) return false;
    for (;;) {
      const failed = s.sendError;
      if (failed !== null) {
        s.sendError = null;
        this.release();
        throw failed;
      }
      if (s.unsent !== null) {
        if (!b.pushUnsent(s)) return false;
        continue;
      }
      if (this.done === 0 && s.writable && b.stage(s, this.buf, this.off, this.len)) {
        this.release();
        return true;
      }
      if (!b.hasStaged(s)) break;
      b.submitSends(); // this socket's queued bytes go before these
    }
    const sys = b.sys;
    const len = this.len;
    while (this.done < len) {
      if (!s.writable) return false;
      const n = sys.write(s.fd, this.buf, this.off + this.done, len - this.done);
      if (n >= 0) {
        this.done += n;
        if (this.done < len) s.writable = false; // the send buffer is full
        continue;
      }
      if (wouldBlock(n)) return (s.writable = false);
      this.release();
      throw errnoException(n, "write");
    }
    this.release();
    return true;
  }
}

/** `recvfrom`: one datagram and its sender. */
export class RecvOp extends ReaderOp<NativeBackend, NativeSocket, [number, Address]> {
  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") throw new SocketClosed("recvfrom()");
    if (!s.readable) return false;
    const out: NativeAddressOut = {};
    const n = this.backend.sys.recvfrom(s.fd, this.buf, this.off, this.len, out);
    if (n >= 0) {
      if (s.readers.length !== 0) this.backend.passRead(s);
      this.value = [n, out as Address];
      return true;
    }
    if (wouldBlock(n)) return (s.readable = false);
    throw errnoException(n, "recvmsg");
  }
}

/**
 * `close`: once the bytes of returned writes are out (queued sends are sent
 * at once; unsent bytes wait for the socket to be writable), the fd is closed
 * (close(2) does not wait). Given up (cancelled, timed out), it closes at once.
 */
export class CloseOp extends SocketOp<NativeBackend, NativeSocket, void> {
  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    if (s.state !== "closed" && !b.sendsOut(s)) return false;
    b.closeNow(s);
    return true;
  }

  protected wait(): void {
    this.backend.parking.park(this.sock.closers, this);
  }

  protected leave(): void {
    this.backend.parking.unpark(this.sock.closers, this);
    this.backend.closeNow(this.sock);
  }
}

/** Waits until the socket is readable, without a buffer and without a system call. */
export class ReadableOp extends ReaderOp<NativeBackend, NativeSocket, void> {
  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") throw new SocketClosed("readSlot()");
    return s.delivered === null && (s.readable || s.receiveShut);
  }
}
