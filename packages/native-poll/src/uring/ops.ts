/**
 * The uring backend's operations, each a `Parked` iterator: they complete
 * in the task's fiber when they can (bytes already received, a connection
 * already accepted, a staging slot free), and otherwise park until a
 * completion wakes them.
 */
import { type Address, type InetAddress, type ListenOptions, Parked, SocketClosed, systemError, type UnixAddress } from "@bobbin/unix";
import { errnoException } from "../errors.js";
import type { NativeAddressOut } from "../load.js";
import { HostLookup, withAddress } from "../lookup.js";
import { Errno, familyOf } from "../syscalls.js";
import type { UringBackend } from "./backend.js";
import { UringSocket } from "./socket.js";

/** What a recycled operation (and one that moves no bytes) points at. */
const EMPTY = new Uint8Array(0);

const { EAGAIN, EWOULDBLOCK, EINPROGRESS } = Errno;

/** A non-blocking call found nothing to do. */
function wouldBlock(rc: number): boolean {
  return rc === EAGAIN || rc === EWOULDBLOCK;
}

/** An operation on one socket, with the caller's buffer range for those that move bytes. */
abstract class SocketOp<T> extends Parked<T> {
  constructor(
    protected readonly backend: UringBackend,
    /** @internal */ readonly sock: UringSocket,
    label: string,
    protected buf: Uint8Array = EMPTY,
    protected off = 0,
    protected len = 0,
  ) {
    super(backend, label);
  }

  /** @internal Makes a finished `read`/`write` the next one of its socket. */
  reuse(buf: Uint8Array, off: number, len: number): this {
    this.buf = buf;
    this.off = off;
    this.len = len;
    return this;
  }
}

/** Parks on the socket's receiving side (read, accept, recvfrom): first in, first woken. */
abstract class ReaderOp<T> extends SocketOp<T> {
  protected wait(): void {
    this.backend.park(this.sock.readers, this);
  }

  protected unwait(): void {
    this.backend.unpark(this.sock.readers, this);
  }

  protected override handoff(): void {
    this.backend.passRead(this.sock);
  }
}

/** `read`: bytes the multishot recv received ahead; 0 at the end of the stream. */
export class ReadOp extends ReaderOp<number> {
  protected override finished(): void {
    this.buf = EMPTY;
    if (this.sock.spareRead === null) this.sock.spareRead = this;
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
export class WriteOp extends SocketOp<void> {
  private done = 0;
  private queued = false;
  /** Waiting for a staging slot rather than on the socket. */
  private forSlot = false;

  override reuse(buf: Uint8Array, off: number, len: number): this {
    this.done = 0;
    this.queued = false;
    this.forSlot = false;
    return super.reuse(buf, off, len);
  }

  protected override finished(): void {
    this.buf = EMPTY;
    this.release();
    if (this.sock.spareWrite === null) this.sock.spareWrite = this;
  }

  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    this.forSlot = false;
    if (s.state === "closed") throw new SocketClosed("write()");
    if (s.writing !== this) {
      if (s.writing !== null || (!this.queued && s.writers.length !== 0)) {
        this.queued = true; // behind the write in progress
        return false;
      }
      if (s.sendError !== null) throw s.sendError;
      if (s.sendShut) throw systemError("EPIPE", "write", "the socket was shut down for sending");
      s.writing = this;
    }
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

  /** Gives up the sending side; the next queued write goes on. */
  private release(): void {
    const s = this.sock;
    if (s.writing !== this) return;
    s.writing = null;
    this.backend.passWrite(s);
  }

  protected wait(): void {
    const s = this.sock;
    if (this.forSlot) this.backend.parkForSlot(this);
    else if (s.writing === this) this.backend.parkFirst(s.writers, this);
    else this.backend.park(s.writers, this);
  }

  protected unwait(): void {
    if (this.forSlot) this.backend.unparkForSlot(this);
    else this.backend.unpark(this.sock.writers, this);
    this.giveUp();
  }

  protected override handoff(): void {
    if (this.forSlot) this.backend.passSlot();
    if (this.sock.writing === this) this.giveUp();
    else this.backend.passWrite(this.sock);
  }

  /** Cancelled mid-write: the piece in flight, if it is this write's, is given up. */
  private giveUp(): void {
    if (this.sock.sendOwner === this) this.backend.abortSend(this.sock);
    this.release();
  }
}

/** `accept`: a connection the multishot accept took. */
export class AcceptOp extends ReaderOp<[UringSocket, Address]> {
  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    if (s.state === "closed") throw new SocketClosed("accept()");
    const fd = s.backlog.shift();
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
export class RecvOp extends ReaderOp<[number, Address]> {
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
 * An operation that first resolves a host name to an address of the
 * socket's family, then may park on the socket's sending side (connect,
 * sendto; bindAndListen only waits for the lookup).
 */
abstract class ResolvingOp<T> extends SocketOp<T> {
  protected readonly lookup = new HostLookup(() => this.ready());
  private parkedOnSocket = false;

  protected wait(): void {
    if (this.lookup.park()) return;
    this.parkedOnSocket = true;
    this.backend.park(this.sock.writers, this);
  }

  protected unwait(): void {
    if (this.lookup.unpark()) return;
    if (this.parkedOnSocket) {
      this.parkedOnSocket = false;
      this.backend.unpark(this.sock.writers, this);
    }
  }

  /** Woken and abandoned: an abandoned connect leaves the socket connecting; closing it is the caller's business. */
  protected override handoff(): void {
    this.parkedOnSocket = false;
  }

  protected resolved(host: string): boolean {
    return this.lookup.resolved(host, familyOf(this.sock.kind));
  }
}

/** `bindAndListen`: bind, then listen (streams) — `listening`, or `bound` (UDP). */
export class ListenOp extends ResolvingOp<void> {
  constructor(
    backend: UringBackend,
    sock: UringSocket,
    private readonly addr: Address,
    private readonly options: Required<ListenOptions>,
  ) {
    super(backend, sock, "bindAndListen");
  }

  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    if (s.state === "closed") throw new SocketClosed("bindAndListen()");
    const unix = s.kind === "unix";
    if (!unix && !this.resolved((this.addr as InetAddress).host)) return false;
    const fd = b.fdOf(s, "bindAndListen");
    const sys = b.sys;
    if (!unix && (s.isStream || this.options.reuseAddr)) {
      // libuv always sets SO_REUSEADDR on TCP listeners; UDP only when asked.
      sys.setsockopt(fd, b.solSocket, b.soReuseAddr, 1);
    }
    const path = unix ? (this.addr as UnixAddress).path : "";
    const ip = this.lookup.ip;
    const port = (this.addr as InetAddress).port;
    const rc = unix ? sys.bind(fd, path, -1) : sys.bind(fd, ip, port);
    const where = unix ? path : `${ip}:${port}`;
    if (rc < 0) throw withAddress(errnoException(rc, s.isStream ? "listen" : "bind", where), this.addr);
    if (!s.isStream) {
      s.state = "bound";
      return true;
    }
    const lr = sys.listen(fd, this.options.backlog);
    if (lr < 0) throw withAddress(errnoException(lr, "listen", where), this.addr);
    s.state = "listening";
    s.backlogSize = this.options.backlog;
    if (unix) s.path = path;
    return true;
  }
}

/** `connect`: a non-blocking connect, completed when a poll on the ring says the socket is writable. */
export class ConnectOp extends ResolvingOp<void> {
  private started = false;

  constructor(
    backend: UringBackend,
    sock: UringSocket,
    private readonly addr: Address,
  ) {
    super(backend, sock, "connect");
  }

  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    if (s.state === "closed") throw new SocketClosed("connect()");
    if (!this.started) {
      const unix = s.kind === "unix";
      if (!unix && !this.resolved((this.addr as InetAddress).host)) return false;
      const fd = b.fdOf(s, "connect");
      this.started = true;
      s.state = "connecting";
      const rc = unix
        ? b.sys.connect(fd, (this.addr as UnixAddress).path, -1)
        : b.sys.connect(fd, this.lookup.ip, (this.addr as InetAddress).port);
      if (rc === 0) {
        s.state = "connected";
        return true;
      }
      if (rc !== EINPROGRESS && rc !== EAGAIN) this.fail(rc);
      b.armPoll(s, false);
      return false;
    }
    if (s.pollOut) return false;
    const err = b.sys.socketError(s.fd);
    if (err !== 0) this.fail(err);
    s.state = "connected";
    return true;
  }

  /** The connection failed: the socket is fresh again (a new fd on the next use). */
  private fail(rc: number): never {
    const s = this.sock;
    this.backend.detach(s);
    s.state = "fresh";
    const where = "path" in this.addr ? this.addr.path : `${this.lookup.ip}:${this.addr.port}`;
    throw withAddress(errnoException(rc, "connect", where), this.addr);
  }
}

/** `sendto`: one datagram; a fresh socket is bound by the kernel on the way. */
export class SendOp extends ResolvingOp<number> {
  constructor(
    backend: UringBackend,
    sock: UringSocket,
    buf: Uint8Array,
    off: number,
    len: number,
    private readonly addr: InetAddress,
  ) {
    super(backend, sock, "sendto", buf, off, len);
  }

  protected attempt(): boolean {
    const s = this.sock;
    const b = this.backend;
    if (s.state === "closed") throw new SocketClosed("sendto()");
    if (!this.resolved(this.addr.host)) return false;
    const fd = b.fdOf(s, "sendto");
    if (s.pollOut) return false;
    const ip = this.lookup.ip;
    const n = b.sys.sendto(fd, this.buf, this.off, this.len, ip, this.addr.port);
    if (n >= 0) {
      if (s.state === "fresh") s.state = "bound";
      this.value = n;
      return true;
    }
    if (wouldBlock(n)) {
      b.armPoll(s, false);
      return false;
    }
    throw withAddress(errnoException(n, "send", `${ip}:${this.addr.port}`), this.addr);
  }
}

/**
 * `close`: the socket is closed for the program at once; the operation
 * returns once its fd is closed, after a send still in flight (whose write
 * returned) completed. Given up (cancelled, timed out), it cancels that send.
 */
export class CloseOp extends SocketOp<void> {
  protected attempt(): boolean {
    this.backend.closeNow(this.sock);
    return this.sock.fd < 0;
  }

  protected wait(): void {
    this.backend.park(this.sock.closers, this);
  }

  protected unwait(): void {
    this.backend.unpark(this.sock.closers, this);
    this.backend.abortSend(this.sock);
  }
}
