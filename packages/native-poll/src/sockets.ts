/**
 * What the two raw-descriptor backends (native: epoll/kqueue readiness,
 * uring: io_uring completions) share: the shape of their sockets, the bases
 * of their operations, binding and listening, and describing and adopting
 * listening sockets across domains.
 */
import type * as B from "@bobbin/core";
import {
  type Address,
  type Backend,
  type InetAddress,
  type ListenOptions,
  type Socket,
  SocketClosed,
  type SocketKind,
  type SocketState,
  type UnixAddress,
} from "@bobbin/unix";
import { isStreamKind, Parked, type SharedSocket, ShareGuard, SocketFile, systemError } from "@bobbin/unix/backend";
import { errnoException } from "./errors.js";
import type { NativeAddressOut, NativeSyscalls } from "./load.js";
import { HostLookup, withAddress } from "./lookup.js";
import type { Parking } from "./parking.js";
import { Errno, familyOf } from "./syscalls.js";

/** @internal An operation parked on a socket. */
export type Waiter = Parked<unknown>;

/** @internal A socket over a raw descriptor: what both backends' sockets have. */
export abstract class RawSocket<B extends Backend = Backend> implements Socket {
  state: SocketState = "fresh";
  /** The descriptor, or -1 while there is none. */
  fd = -1;
  /** Parked on the receiving side: read, accept, recvfrom. */
  readonly readers: Waiter[] = [];
  /** Parked on the sending side: write, connect, sendto. */
  readonly writers: Waiter[] = [];
  /** A Unix listener's socket file, unlinked when it closes (as libuv does); never set for an adopted listener. */
  file: SocketFile | null = null;
  /** A listener's backlog (for `share`). */
  backlog = 0;
  /** Made by the first `share` of a listener; sealed before its fd is closed. */
  guard: ShareGuard | null = null;
  /**
   * Finished `read`/`write` operations kept for the next call (Parked's
   * recycling, see {@link reuseRead}): the hot path allocates neither an
   * operation nor a suspension point per call. An operation made and never
   * run simply is not recycled.
   */
  spareRead: Recyclable<number> | null = null;
  spareWrite: Recyclable<void> | null = null;

  constructor(
    readonly kind: SocketKind,
    readonly backend: B,
  ) {}

  get isStream(): boolean {
    return isStreamKind(this.kind);
  }

  toString(): string {
    return `Socket(${this.kind}, ${this.state}, fd ${this.fd})`;
  }

  /**
   * A Unix listener's file goes with it, as libuv's pipes' do: once, and only
   * while it is still the socket bound here (see `SocketFile`).
   */
  unlinkPath(): void {
    this.file?.remove();
    this.file = null;
  }

  /** `using`: begins closing, as an ownership finaliser does. */
  [Symbol.dispose](): void {
    this.backend.closeNow(this);
  }
}

/** @internal An operation that moves bytes, made again over a new buffer range by `reuse`. */
export interface Recyclable<T> extends B.Operation<T> {
  reuse(buf: Uint8Array, off: number, len: number): Recyclable<T>;
}

/** @internal The socket's finished `read` over a new range, or null: the backend makes one then. */
export function reuseRead(s: RawSocket, buf: Uint8Array, off: number, len: number): B.Operation<number> | null {
  const spare = s.spareRead;
  s.spareRead = null;
  return spare === null ? null : spare.reuse(buf, off, len);
}

/** @internal The socket's finished `write` over a new range, or null. */
export function reuseWrite(s: RawSocket, buf: Uint8Array, off: number, len: number): B.Operation<void> | null {
  const spare = s.spareWrite;
  s.spareWrite = null;
  return spare === null ? null : spare.reuse(buf, off, len);
}

/** @internal A raw-descriptor backend, as the shared operations see it. */
export interface RawBackend<S extends RawSocket> {
  readonly sys: NativeSyscalls;
  readonly solSocket: number;
  readonly soReuseAddr: number;
  /** The socket's fd, made on first need. */
  fdOf(s: S, what: string): number;
  /** Makes `fd` the socket's (registered with the backend's set or ring). */
  attach(s: S, fd: number): void;
  /** Closes the socket's fd (the socket object lives on, fresh again or closed). */
  detach(s: S): void;
  /** The operations parked on I/O. */
  readonly parking: Parking;
  /** What a finished or cancelled reader did not use goes to the next one. */
  passRead(s: S): void;
  /** The same for the sending side. */
  passWrite(s: S): void;
  /** A connect or sendto found the socket not writable: arrange for its waiters to be woken when it is. */
  waitWritable(s: S): void;
  /** Whether the socket is writable (as far as the backend heard) since `waitWritable`. */
  isWritable(s: S): boolean;
}

/** @internal What a recycled operation (and one that moves no bytes) points at. */
export const EMPTY = new Uint8Array(0);

const { EAGAIN, EWOULDBLOCK, EINPROGRESS } = Errno;

/** @internal A non-blocking call found nothing to do (`EAGAIN`, or `EWOULDBLOCK` where it differs). */
export function wouldBlock(rc: number): boolean {
  return rc === EAGAIN || rc === EWOULDBLOCK;
}

/** @internal An operation on one socket, with the caller's buffer range for those that move bytes. */
export abstract class SocketOp<B extends RawBackend<S>, S extends RawSocket, T> extends Parked<T> {
  constructor(
    protected readonly backend: B,
    /** @internal */ readonly sock: S,
    label: string,
    protected buf: Uint8Array = EMPTY,
    protected off = 0,
    protected len = 0,
  ) {
    super(label);
  }

  /** @internal Makes a finished `read`/`write` the next one of its socket (no allocation per call). */
  reuse(buf: Uint8Array, off: number, len: number): this {
    this.buf = buf;
    this.off = off;
    this.len = len;
    return this;
  }
}

/** @internal An operation that parks on its socket's receiving side: first in, first woken. */
export abstract class ReaderOp<B extends RawBackend<S>, S extends RawSocket, T> extends SocketOp<B, S, T> {
  protected wait(): void {
    this.backend.parking.park(this.sock.readers, this);
  }

  protected leave(): void {
    this.backend.parking.unpark(this.sock.readers, this);
  }
}

/**
 * @internal An operation that first resolves a host name to an address of
 * the socket's family (once, in a Node callback), then may park on the
 * socket's sending side (connect, sendto; bindAndListen only waits for the lookup).
 */
export abstract class ResolvingOp<B extends RawBackend<S>, S extends RawSocket, T> extends SocketOp<B, S, T> {
  protected readonly lookup = new HostLookup(() => this.ready());
  private parkedOnSocket = false;

  /** True once `lookup.ip` is a numeric address for `host`; false while resolving. */
  protected resolved(host: string): boolean {
    return this.lookup.resolved(host, familyOf(this.sock.kind));
  }

  /** Parks for the lookup while it runs, else on the sending side. */
  protected wait(): void {
    if (this.lookup.park()) return;
    this.parkedOnSocket = true;
    this.backend.parking.park(this.sock.writers, this);
  }

  protected leave(): void {
    if (this.lookup.unpark()) return;
    if (this.parkedOnSocket) {
      this.parkedOnSocket = false;
      this.backend.parking.unpark(this.sock.writers, this);
    }
  }
}

/** @internal `bindAndListen`: bind, then listen (streams) — `listening`, or `bound` (UDP). */
export class ListenOp<B extends RawBackend<S>, S extends RawSocket> extends ResolvingOp<B, S, void> {
  constructor(
    backend: B,
    sock: S,
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
    const { host, port } = this.addr as InetAddress;
    if (!unix && !this.resolved(host)) return false;
    const fd = b.fdOf(s, "bindAndListen");
    const sys = b.sys;
    const stream = s.isStream;
    if (!unix && (stream || this.options.reuseAddr)) {
      // libuv always sets SO_REUSEADDR on TCP listeners; UDP only when asked.
      sys.setsockopt(fd, b.solSocket, b.soReuseAddr, 1);
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

/** @internal A stream socket whose writes take turns (see {@link StreamWriteOp}). */
export interface TakingTurns {
  /** The write in progress: it owns the sending side. */
  writing: Waiter | null;
  sendShut: boolean;
}

/**
 * @internal `write` on a stream: writes to one socket never interleave. The
 * write in progress owns the socket's sending side (`sock.writing`) until it
 * has handed its last byte on (`release`); later writes queue behind it, in
 * order, and it waits at their head.
 */
export abstract class StreamWriteOp<B extends RawBackend<S>, S extends RawSocket & TakingTurns> extends SocketOp<B, S, void> {
  /** Bytes of the caller's range handed on so far. */
  protected done = 0;
  private queued = false;

  override reuse(buf: Uint8Array, off: number, len: number): this {
    this.done = 0;
    this.queued = false;
    return super.reuse(buf, off, len);
  }

  /**
   * Takes the sending side, or returns false to wait behind the write in progress.
   * @throws Error (EPIPE) when the socket was shut down for sending.
   */
  protected takeTurn(): boolean {
    const s = this.sock;
    if (s.writing === this) return true;
    if (s.writing !== null || (!this.queued && s.writers.length !== 0)) {
      this.queued = true;
      return false;
    }
    if (s.sendShut) throw systemError("EPIPE", "write", "the socket was shut down for sending");
    s.writing = this;
    return true;
  }

  /** Over: the socket keeps it for its next `write`. */
  protected override finished(): void {
    this.buf = EMPTY;
    this.release();
    this.sock.spareWrite ??= this;
  }

  /** Gives up the sending side; the next queued write goes on. */
  protected release(): void {
    const s = this.sock;
    if (s.writing !== this) return;
    s.writing = null;
    this.backend.passWrite(s);
  }

  protected wait(): void {
    if (this.sock.writing === this) this.backend.parking.parkFirst(this.sock.writers, this);
    else this.backend.parking.park(this.sock.writers, this);
  }

  protected leave(): void {
    this.backend.parking.unpark(this.sock.writers, this);
    this.release();
  }
}

/**
 * @internal `connect`: a non-blocking connect, completed once the backend
 * says the socket is writable. A failed connect leaves the socket fresh (a
 * new fd on the next use).
 */
export class ConnectOp<B extends RawBackend<S>, S extends RawSocket> extends ResolvingOp<B, S, void> {
  private started = false;

  constructor(
    backend: B,
    sock: S,
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
      const { host, port } = this.addr as InetAddress;
      if (!unix && !this.resolved(host)) return false;
      const fd = b.fdOf(s, "connect");
      this.started = true;
      s.state = "connecting";
      const rc = unix ? b.sys.connect(fd, (this.addr as UnixAddress).path, -1) : b.sys.connect(fd, this.lookup.ip, port);
      if (rc === 0) {
        s.state = "connected";
        return true;
      }
      if (rc !== EINPROGRESS && rc !== EAGAIN) this.fail(rc);
      b.waitWritable(s);
      return false;
    }
    if (!b.isWritable(s)) return false;
    const err = b.sys.socketError(s.fd);
    if (err !== 0) this.fail(err);
    s.state = "connected";
    return true;
  }

  private fail(rc: number): never {
    const s = this.sock;
    this.backend.detach(s);
    s.state = "fresh";
    const where = "path" in this.addr ? this.addr.path : `${this.lookup.ip}:${this.addr.port}`;
    throw withAddress(errnoException(rc, "connect", where), this.addr);
  }
}

/** @internal `sendto`: one datagram; a fresh socket is bound by the kernel on the way. */
export class SendToOp<B extends RawBackend<S>, S extends RawSocket> extends ResolvingOp<B, S, number> {
  constructor(
    backend: B,
    sock: S,
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
    if (!b.isWritable(s)) return false;
    const ip = this.lookup.ip;
    const n = b.sys.sendto(fd, this.buf, this.off, this.len, ip, this.addr.port);
    if (n >= 0) {
      if (s.state === "fresh") s.state = "bound";
      this.value = n;
      return true;
    }
    if (wouldBlock(n)) {
      b.waitWritable(s);
      return false;
    }
    throw withAddress(errnoException(n, "send", `${ip}:${this.addr.port}`), this.addr);
  }
}

/** @internal The address `s` is bound to (`getsockname`). @throws TypeError when it is not bound yet. */
export function localAddressOf(sys: NativeSyscalls, s: RawSocket): Address {
  if (s.fd >= 0) {
    const out: NativeAddressOut = {};
    if (sys.getsockname(s.fd, out) === 0) {
      if (s.kind === "unix") return { path: out.path ?? "" };
      return out as InetAddress;
    }
  }
  throw new TypeError(`localAddress(): the ${s.kind} socket is not bound yet`);
}

/**
 * @internal Describes a listening socket for another domain: its fd (each
 * domain has its own, see {@link adoptDescriptor}) and a guard made on the
 * first share, sealed before the fd is closed.
 */
export function describeListener(sys: NativeSyscalls, s: RawSocket): SharedSocket {
  s.guard ??= new ShareGuard();
  return { kind: s.kind, fd: s.fd, address: localAddressOf(sys, s), backlog: s.backlog, guard: s.guard.buffer };
}

/**
 * @internal Makes `s` (a fresh socket of `shared`'s kind) this domain's
 * listener over another domain's listening socket: a descriptor of its own
 * (see {@link adoptDescriptor}), attached like any listener's. Closing it
 * closes only that descriptor, and never unlinks a Unix socket's file (the
 * domain that bound it does). `s` is left `closed` when the owner closed its
 * socket first.
 * @throws Error (Node-style, `dup`) when the descriptor cannot be duplicated.
 */
export function adoptListener<S extends RawSocket>(b: RawBackend<S>, s: S, shared: SharedSocket): S {
  s.backlog = shared.backlog;
  const fd = adoptDescriptor(b.sys, shared);
  if (fd < 0) {
    s.state = "closed";
    return s;
  }
  b.attach(s, fd);
  s.state = "listening";
  return s;
}

/**
 * A descriptor of this domain's own for another domain's listening
 * socket: a `dup` made while the owner's guard is pinned, or -1 when the
 * owner closed it first (the descriptor is never touched then).
 * @throws Error (Node-style, `dup`) when the descriptor cannot be duplicated.
 */
function adoptDescriptor(sys: NativeSyscalls, shared: SharedSocket): number {
  const guard = ShareGuard.of(shared.guard);
  if (!guard.pin()) return -1;
  let fd: number;
  try {
    fd = sys.dup(shared.fd);
  } finally {
    guard.unpin();
  }
  if (fd < 0) throw errnoException(fd, "dup", "(adopting a listening socket from another domain)");
  return fd;
}
