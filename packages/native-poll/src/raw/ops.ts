/**
 * The operations both raw-descriptor backends share: binding and listening,
 * connecting and sending datagrams (each resolving a host name first),
 * taking from a socket's receiving side (`TakeOp`), and the turn-taking of a
 * stream's writes. They run the system calls of the
 * addon in the task's fiber and park when the backend says to wait.
 */
import { type Address, type InetAddress, type ListenSettings, SocketClosed, type UnixAddress } from "@bobbin/unix";
import { BufferOp, Parked, SocketFile, systemError } from "@bobbin/unix/backend";
import { errnoException } from "../errno.js";
import { Errno, familyOf, typeOf } from "../syscalls.js";
import { type RawIo, wouldBlock } from "./io.js";
import { HostLookup, withAddress } from "./lookup.js";
import type { RawSocket } from "./socket.js";

const { EAGAIN, EINPROGRESS } = Errno;

/** The socket's fd, made (and attached to the backend's set or ring) on first need; `what` names the call in an error. */
function fdOf<S extends RawSocket>(io: RawIo<S>, s: S, what: string): number {
  if (s.fd >= 0) return s.fd;
  const fd = io.sys.socket(familyOf(s.kind), typeOf(s.kind));
  if (fd < 0) throw errnoException(fd, "socket", `(${what})`);
  io.attach(s, fd);
  return fd;
}

/** @internal An operation on one socket of a raw backend: a dump names it ("accept fd 12"). */
export abstract class SocketOp<S extends RawSocket, T, I extends RawIo<S> = RawIo<S>> extends Parked<T> {
  constructor(
    protected readonly io: I,
    /** @internal */ readonly sock: S,
    label: string,
  ) {
    super(label);
  }
}

/** @internal An operation over a buffer range of a raw backend, which a socket may keep for its next call (see `BufferOp`). */
export abstract class SocketBufferOp<S extends RawSocket, T, I extends RawIo<S> = RawIo<S>> extends BufferOp<T> {
  constructor(
    protected readonly io: I,
    /** @internal */ readonly sock: S,
    label: string,
  ) {
    super(label);
  }
}

/**
 * @internal An operation that takes what its socket has for it on the
 * receiving side (a connection, a datagram, readiness), parked among the
 * socket's readers while there is nothing; it fails with `SocketClosed`
 * once the socket is closed.
 */
export abstract class TakeOp<S extends RawSocket, T, I extends RawIo<S> = RawIo<S>> extends SocketBufferOp<S, T, I> {
  /** What the socket has for it now, or null. */
  protected abstract take(): T | null;

  protected attempt(): boolean {
    if (this.sock.state === "closed") throw new SocketClosed(`${this.describe()}()`);
    const got = this.take();
    if (got === null) return false;
    this.value = got;
    return true;
  }

  protected wait(): void {
    this.sock.addReader(this);
  }

  protected leave(): void {
    this.sock.leaveReader(this);
  }
}

/**
 * @internal An operation that first resolves a host name to an address of
 * the socket's family (once, in a Node callback), then may park on the
 * socket's sending side (connect, sendto; bindAndListen only waits for the lookup).
 */
abstract class ResolvingOp<S extends RawSocket, T> extends SocketOp<S, T> {
  protected readonly lookup = new HostLookup(() => this.ready());
  #onSocket = false;

  /** True once `lookup.ip` is a numeric address for `host`; false while resolving. */
  protected resolved(host: string): boolean {
    return this.lookup.resolved(host, familyOf(this.sock.kind));
  }

  /** Waits for the lookup while it runs, else on the sending side. */
  protected wait(): void {
    if (this.lookup.wait()) return;
    this.#onSocket = true;
    this.sock.writers.add(this);
  }

  protected leave(): void {
    if (this.lookup.leave()) return;
    if (this.#onSocket) {
      this.#onSocket = false;
      this.sock.writers.leave(this);
    }
  }
}

/** @internal `bindAndListen`: bind, then listen (streams) — `listening`, or `bound` (UDP). */
export class ListenOp<S extends RawSocket> extends ResolvingOp<S, void> {
  constructor(
    io: RawIo<S>,
    sock: S,
    private readonly addr: Address,
    private readonly options: ListenSettings,
  ) {
    super(io, sock, "bindAndListen");
  }

  protected attempt(): boolean {
    const s = this.sock;
    const io = this.io;
    if (s.state === "closed") throw new SocketClosed("bindAndListen()");
    const unix = s.kind === "unix";
    const { host, port } = this.addr as InetAddress;
    if (!unix && !this.resolved(host)) return false;
    const fd = fdOf(io, s, "bindAndListen");
    const sys = io.sys;
    const stream = s.isStream;
    if (!unix && (stream || this.options.reuseAddr)) {
      // libuv always sets SO_REUSEADDR on TCP listeners; UDP only when asked.
      sys.setsockopt(fd, io.solSocket, io.soReuseAddr, 1);
    }
    const ip = this.lookup.ip;
    const path = unix ? (this.addr as UnixAddress).path : "";
    const rc = unix ? sys.bind(fd, path, -1) : sys.bind(fd, ip, port);
    const where = unix ? path : `${ip}:${port}`;
    if (rc < 0) throw withAddress(errnoException(rc, stream ? "listen" : "bind", where), this.addr);
    if (stream) {
      const lr = sys.listen(fd, this.options.backlog);
      if (lr < 0) throw withAddress(errnoException(lr, "listen", where), this.addr);
      s.state = "listening";
      s.backlog = this.options.backlog;
      // Resolved now, against the directory bind resolved it in.
      if (unix) s.file = SocketFile.bound(path);
    } else {
      s.state = "bound";
    }
    return true;
  }
}

/**
 * @internal `connect`: a non-blocking connect, completed once the backend
 * says the socket is writable. A failed connect leaves the socket fresh (a
 * new fd on the next use).
 */
export class ConnectOp<S extends RawSocket> extends ResolvingOp<S, void> {
  #started = false;

  constructor(
    io: RawIo<S>,
    sock: S,
    private readonly addr: Address,
  ) {
    super(io, sock, "connect");
  }

  protected attempt(): boolean {
    const s = this.sock;
    const io = this.io;
    if (s.state === "closed") throw new SocketClosed("connect()");
    if (!this.#started) {
      const unix = s.kind === "unix";
      const { host, port } = this.addr as InetAddress;
      if (!unix && !this.resolved(host)) return false;
      const fd = fdOf(io, s, "connect");
      this.#started = true;
      s.state = "connecting";
      const rc = unix ? io.sys.connect(fd, (this.addr as UnixAddress).path, -1) : io.sys.connect(fd, this.lookup.ip, port);
      if (rc === 0) {
        s.state = "connected";
        return true;
      }
      if (rc !== EINPROGRESS && rc !== EAGAIN) this.#fail(rc);
      io.waitWritable(s);
      return false;
    }
    if (!io.isWritable(s)) return false;
    const err = io.sys.socketError(s.fd);
    if (err !== 0) this.#fail(err);
    s.state = "connected";
    return true;
  }

  #fail(rc: number): never {
    const s = this.sock;
    this.io.closeFd(s);
    s.state = "fresh";
    const where = "path" in this.addr ? this.addr.path : `${this.lookup.ip}:${this.addr.port}`;
    throw withAddress(errnoException(rc, "connect", where), this.addr);
  }
}

/** @internal `sendto`: one datagram; a fresh socket is bound by the kernel on the way. */
export class SendToOp<S extends RawSocket> extends ResolvingOp<S, number> {
  constructor(
    io: RawIo<S>,
    sock: S,
    private readonly buf: Uint8Array,
    private readonly off: number,
    private readonly len: number,
    private readonly addr: InetAddress,
  ) {
    super(io, sock, "sendto");
  }

  protected attempt(): boolean {
    const s = this.sock;
    const io = this.io;
    if (s.state === "closed") throw new SocketClosed("sendto()");
    if (!this.resolved(this.addr.host)) return false;
    const fd = fdOf(io, s, "sendto");
    if (!io.isWritable(s)) return false;
    const ip = this.lookup.ip;
    const n = io.sys.sendto(fd, this.buf, this.off, this.len, ip, this.addr.port);
    if (n >= 0) {
      if (s.state === "fresh") s.state = "bound";
      this.value = n;
      return true;
    }
    if (wouldBlock(n)) {
      io.waitWritable(s);
      return false;
    }
    throw withAddress(errnoException(n, "send", `${ip}:${this.addr.port}`), this.addr);
  }
}

/** @internal A stream socket whose writes take turns (see {@link StreamWriteOp}). */
export interface TakingTurns {
  /** The write in progress: it owns the sending side. */
  writing: Parked<unknown> | null;
}

/**
 * @internal `write` on a stream: writes to one socket never interleave. The
 * write in progress owns the socket's sending side (`sock.writing`) until it
 * has handed its last byte on (`release`); later writes queue behind it, in
 * order, and it waits at their head.
 */
export abstract class StreamWriteOp<S extends RawSocket & TakingTurns, I extends RawIo<S>> extends SocketBufferOp<S, void, I> {
  /** Bytes of the caller's range handed on so far. */
  protected done = 0;
  #queued = false;

  override init(buf: Uint8Array, off: number, len: number): this {
    this.done = 0;
    this.#queued = false;
    return super.init(buf, off, len);
  }

  /**
   * Takes the sending side, or returns false to wait behind the write in progress.
   * @throws Error (EPIPE) when the socket was shut down for sending.
   */
  protected takeTurn(): boolean {
    const s = this.sock;
    if (s.writing === this) return true;
    if (s.writing !== null || (!this.#queued && s.writers.length !== 0)) {
      this.#queued = true;
      return false;
    }
    if (s.sendShut) throw systemError("EPIPE", "write", "the socket was shut down for sending");
    s.writing = this;
    return true;
  }

  /** Over: the sending side goes to the next write. */
  protected override finished(): void {
    super.finished();
    this.release();
  }

  /** Gives up the sending side; the next queued write goes on. */
  protected release(): void {
    const s = this.sock;
    if (s.writing !== this) return;
    s.writing = null;
    this.io.passWrite(s);
  }

  protected wait(): void {
    if (this.sock.writing === this) this.sock.writers.addFirst(this);
    else this.sock.writers.add(this);
  }

  protected leave(): void {
    this.sock.writers.leave(this);
    this.release();
  }
}
