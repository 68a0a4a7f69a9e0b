/**
 * The native backend's operations, each a `Parked` iterator: they try their
 * system call in the task's fiber first and park only on `EAGAIN`, until
 * the poller's batch says the socket is ready again.
 */
import { type Address, SocketClosed } from "@bobbin/unix";
import { errnoException } from "../errno.js";
import { wouldBlock } from "../raw/io.js";
import { SocketBufferOp, SocketOp, StreamWriteOp, TakeOp } from "../raw/ops.js";
import { receive } from "./datagram.js";
import type { EpollIo } from "./io.js";
import { acceptOne } from "./listener.js";
import type { NativeSocket, Reader } from "./socket.js";
import { closeNow, hasStaged, pushUnsent, releaseDelivered, sendsOut, stageNow } from "./stream.js";

/** A reader's `ahead` when the batch read nothing for it. */
const NOTHING = Number.NEGATIVE_INFINITY;

/** `accept`: one pending connection, taken with `accept4`. */
export class AcceptOp extends TakeOp<NativeSocket, [NativeSocket, Address], EpollIo> {
  protected take(): [NativeSocket, Address] | null {
    return acceptOne(this.io, this.sock);
  }
}

/**
 * `read`: `read(2)` into the caller's buffer; 0 at the end of the stream.
 * Parked, it is read for by the poller's batch (read-ahead): the bytes
 * arrive with the batch and are copied into its buffer before it is woken.
 * Each socket keeps one to reuse while it is idle.
 */
export class ReadOp extends SocketBufferOp<NativeSocket, number, EpollIo> implements Reader {
  /** What the batch read for it: bytes (≥ 0), a negative errno, or -Infinity (nothing yet). */
  #ahead = NOTHING;

  get wanted(): number {
    return this.len;
  }

  /** The batch read `read` bytes (or -errno) for it, from `area` at `at`; the caller wakes it next. */
  takeAhead(read: number, area: Uint8Array, at: number): void {
    const s = this.sock;
    this.#ahead = read;
    if (read <= 0) return;
    this.buf.set(area.subarray(at, at + read), this.off);
    // A short read emptied the receive queue (what was asked: the reader's length, or the area's rest).
    if (read < Math.min(this.len, area.length - at) && !s.hup) s.readable = false;
  }

  /** Over: the readers behind a reader woken with bytes go on. */
  protected override finished(): void {
    super.finished();
    this.#ahead = NOTHING;
    releaseDelivered(this.io, this.sock, this);
  }

  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") throw new SocketClosed("read()");
    const ahead = this.#ahead;
    if (ahead !== NOTHING) {
      this.#ahead = NOTHING;
      if (ahead < 0) throw errnoException(ahead, "read");
      this.value = ahead;
      return true;
    }
    // A reader woken with bytes read ahead returns them first (its finished() lets this one go on).
    if (s.delivered !== null) return false;
    if (s.receiveShut) {
      this.value = 0;
      return true;
    }
    if (!s.readable) return false;
    const n = this.io.sys.read(s.fd, this.buf, this.off, this.len);
    if (n >= 0) {
      // A short read emptied the receive queue: the next arrival is a new edge.
      if (n < this.len && n !== 0 && !s.hup) s.readable = false;
      else if (s.readerCount !== 0) this.io.passRead(s);
      this.value = n;
      return true;
    }
    if (wouldBlock(n)) return (s.readable = false);
    throw errnoException(n, "read");
  }

  protected wait(): void {
    this.sock.addReader(this);
    this.io.syncWant(this.sock);
  }

  protected leave(): void {
    this.sock.leaveReader(this);
    this.io.syncWant(this.sock);
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
 * go first. Each socket keeps one to reuse while it is idle.
 */
export class WriteOp extends StreamWriteOp<NativeSocket, EpollIo> {
  protected attempt(): boolean {
    const s = this.sock;
    const io = this.io;
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
        if (!pushUnsent(io, s)) return false;
        continue;
      }
      if (this.done === 0 && stageNow(io, s, this.buf, this.off, this.len)) {
        this.release();
        return true;
      }
      if (!hasStaged(io, s)) break;
      io.poller.flush(); // this socket's queued bytes go before these
    }
    const sys = io.sys;
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
export class RecvOp extends TakeOp<NativeSocket, [number, Address], EpollIo> {
  protected take(): [number, Address] | null {
    return receive(this.io, this.sock, this.buf, this.off, this.len);
  }
}

/**
 * `close`: once the bytes of returned writes are out (queued sends are sent
 * at once; unsent bytes wait for the socket to be writable), the fd is closed
 * (close(2) does not wait). Given up (cancelled, timed out), it closes at once.
 */
export class CloseOp extends SocketOp<NativeSocket, void, EpollIo> {
  protected attempt(): boolean {
    const s = this.sock;
    if (s.state !== "closed" && !sendsOut(this.io, s)) return false;
    closeNow(this.io, s);
    return true;
  }

  protected wait(): void {
    this.sock.closers.add(this);
  }

  protected leave(): void {
    this.sock.closers.leave(this);
    closeNow(this.io, this.sock);
  }
}

/** Waits until the socket is readable, without a buffer and without a system call (`readSlot`). */
export class ReadableOp extends TakeOp<NativeSocket, true, EpollIo> {
  protected take(): true | null {
    const s = this.sock;
    return s.delivered === null && (s.readable || s.receiveShut) ? true : null;
  }
}
