/**
 * The native backend for `@bobbin/unix`: sockets are raw non-blocking fds in
 * the poller's epoll/kqueue set, registered once, edge-triggered, for both
 * directions (src/epoll/socket.ts keeps their readiness). An operation tries
 * its system call in the task's fiber first and parks only on `EAGAIN`
 * (src/epoll/ops.ts); the poller's batch marks sockets ready and wakes the
 * first waiter of each direction.
 */
import type * as B from "@bobbin/core";
import {
  type Address,
  type Backend,
  defineBackend,
  type InetAddress,
  type ListenOptions,
  type ShutdownCommand,
  type Socket,
  type SocketKind,
} from "@bobbin/unix";
import { NodeLoop, type SharedSocket } from "@bobbin/unix/backend";
import { ArenaPool, type ArenaPoolOptions } from "../arena.js";
import { errnoException } from "../errors.js";
import { loadAddon, type NativeSyscalls } from "../load.js";
import { afterHandleClose, BackendFailure, Parking } from "../parking.js";
import { PollEvent, Poller, type PollerStats } from "../poller.js";
import {
  adoptListener,
  ConnectOp,
  describeListener,
  ListenOp,
  localAddressOf,
  reuseRead,
  reuseWrite,
  SendToOp,
  wouldBlock,
} from "../sockets.js";
import { familyOf, typeOf } from "../syscalls.js";
import { AcceptOp, CloseOp, ReadOp, RecvOp, WriteOp } from "./ops.js";
import { NativeSocket } from "./socket.js";

const { READABLE, WRITABLE, HANGUP, ERROR } = PollEvent;
const READ_BITS = READABLE | HANGUP | ERROR;
const WRITE_BITS = WRITABLE | HANGUP | ERROR;
const NOT_READ = Poller.NOT_READ;
/**
 * Bytes the poller may read ahead per batch, for the readers parked on the
 * ready sockets (a batch of 64-byte echoes for 50 connections takes 3.2 KiB;
 * a batch that fills it leaves the rest of its readers to read for themselves).
 */
const READ_AHEAD_BYTES = 256 * 1024;
/** Bytes of the queued sends of one slice; a write larger than STAGE_MAX is sent directly. */
const STAGING_BYTES = 256 * 1024;
const STAGE_MAX = 16 * 1024;
const NOT_SENT = Poller.NOT_SENT;

/**
 * Options of {@link nativeBackend}.
 *
 * @example
 * ```ts
 * await run(main, { backend: () => nativeBackend({ batchSize: 256, pool: { slotSize: 4096 } }) });
 * ```
 * @throws never (a type; {@link nativeBackend} validates it).
 */
export interface NativeBackendOptions {
  /** Events drained per batch. Default 1024. */
  readonly batchSize?: number;
  /**
   * Drain the set directly when the run queue empties, before waiting in
   * Node's loop (see {@link NativeBackend.select}). Default `true`.
   */
  readonly eagerPoll?: boolean;
  /**
   * The arena pool behind `readSlot` (a pool, or options for a new one).
   * Default: 16 KiB slots, no cap.
   */
  readonly pool?: ArenaPool | ArenaPoolOptions;
}

/**
 * The `@bobbin/unix` backend on the native poller. Make one per run with
 * {@link nativeBackend}.
 *
 * @example
 * ```ts
 * import { run } from "@bobbin/unix";
 * import { nativeBackend } from "@bobbin/native-poll";
 * await run(main, { backend: nativeBackend });
 * ```
 * @throws NativeUnavailable (from the constructor) when the addon is not built.
 * @throws RangeError (from the constructor) for a bad `batchSize`.
 */
export class NativeBackend extends NodeLoop implements Backend {
  readonly name = "native";
  /** The arena pool behind `readSlot`. */
  readonly pool: ArenaPool;
  /** @internal */ readonly sys: NativeSyscalls;
  /** @internal */ readonly solSocket: number;
  /** @internal */ readonly soReuseAddr: number;
  private readonly poller: Poller;
  /** Sockets by fd. */
  private readonly byFd: (NativeSocket | undefined)[] = [];
  /** @internal Sockets with an open fd. */
  readonly live = new Set<NativeSocket>();
  /** @internal Operations parked on I/O: while there are some, the poller keeps Node alive. */
  readonly parking: Parking;
  private destroyed = false;
  private readonly eager: boolean;
  /** What failed under the poller in a Node callback: thrown by the next `select`, which fails the run. */
  private readonly failure = new BackendFailure(() => this.interrupt());

  /**
   * @throws NativeUnavailable when the addon is not built.
   * @throws RangeError for a bad `batchSize`.
   */
  constructor(options: NativeBackendOptions = {}) {
    super("microtask");
    const native = loadAddon();
    const size = options.batchSize ?? 1024;
    if (!Number.isInteger(size) || size < 1 || size > 1_000_000) {
      throw new RangeError(`nativeBackend({ batchSize }): an integer in 1 … 1000000, got ${String(size)}`);
    }
    this.sys = native.syscalls;
    this.solSocket = native.sockopts.SOL_SOCKET!;
    this.soReuseAddr = native.sockopts.SO_REUSEADDR!;
    // Unreferenced: Node's loop is held only while operations are parked (Parking).
    this.poller = new Poller((fd, events, _token, read, at) => this.onEvent(fd, events, read, at), {
      batchSize: size,
      ref: false,
      readAhead: READ_AHEAD_BYTES,
      sendStaging: STAGING_BYTES,
      onSend: (fd, result, unsent) => this.onSend(fd, result, unsent),
      onError: (error) => this.failure.fail(error),
    });
    this.parking = new Parking(this.poller);
    this.eager = options.eagerPoll ?? true;
    this.pool = options.pool instanceof ArenaPool ? options.pool : new ArenaPool(options.pool ?? {});
  }

  // -- events -------------------------------------------------------------------

  /**
   * Counters for tuning, the poller's: batches delivered by Node's loop,
   * drains done by `select`, and the events each brought.
   */
  get stats(): PollerStats {
    return this.poller.stats;
  }

  /**
   * Core's `pending`: operations parked on sockets, whose readiness `select`
   * drains from the poller, or queued sends, which `select` submits.
   */
  pending(): boolean {
    return (this.parking.count !== 0 || this.poller.staged !== 0) && !this.destroyed;
  }

  /**
   * Core's `select`. While operations are parked, the set is first drained
   * right here, without waiting (one `epoll_wait`/`kevent` with a zero
   * timeout): with `block = false` a busy scheduler sees I/O without going
   * back to Node's loop, and with `block = true` (the run queue is empty)
   * events that arrived while the tasks ran are handled at once, as a C event
   * loop would, instead of after a turn of Node's loop. Only when nothing is
   * ready does a blocking `select` return a Promise, settled by the batch the
   * `uv_poll_t` delivers (or by `interrupt()`). The scheduler still hands
   * Node's loop a turn after every time slice (`run`'s `sliceMs`). When the
   * poller failed in a Node callback (a failed `epoll_wait`…), `select`
   * throws that error, and core fails the run with it.
   */
  override select(block: boolean, cancelled: readonly B.Uid[]): B.Signal[] | Promise<B.Signal[]> {
    this.failure.check();
    if (!this.destroyed) {
      // The drain submits the slice's queued sends first, in the same call.
      if (this.parking.count !== 0 && (!block || this.eager)) {
        // Tasks were woken: nothing to wait for.
        if (this.poller.poll(0) > 0) return super.select(false, cancelled);
      } else {
        this.poller.flush();
      }
    }
    return super.select(block, cancelled);
  }

  /**
   * An event of the poller's batch (the poller drops those of an fd closed
   * or registered again since it was drained): marks the socket ready and
   * wakes the first waiter of each direction it names. When the batch read
   * for the socket's parked `read` (`read` is not NOT_READ), the bytes are
   * that reader's: copied into its buffer before it is woken.
   */
  private onEvent(fd: number, events: number, read: number, at: number): void {
    const s = this.byFd[fd]!;
    if ((events & (HANGUP | ERROR)) !== 0) s.hup = true;
    if ((events & READ_BITS) !== 0) {
      s.readable = true;
      if (read !== NOT_READ) {
        // Nothing to read after all: the reader stays parked until the next edge.
        if (wouldBlock(read)) s.readable = false;
        else this.takeAhead(s, read, at);
      } else if (s.readers.length !== 0) this.wakeReader(s);
    }
    if ((events & WRITE_BITS) !== 0) {
      s.writable = true;
      // Returned writes' bytes go first (a close waiting for them goes on once they are out).
      if (s.unsent !== null && s.writing === null) this.pushUnsent(s);
      // Not past a write in progress that is already on its way back.
      if (s.writers.length !== 0 && (s.writing === null || s.writers[0] === s.writing)) this.parking.wake(s.writers.shift()!);
    }
  }

  /** The batch read for the socket's first reader, a `read` (the only kind it reads for: see {@link syncWant}). */
  private takeAhead(s: NativeSocket, read: number, at: number): void {
    const reader = s.readers[0];
    if (!(reader instanceof ReadOp)) throw new Error(`native backend: bytes were read ahead for ${s} but no read waits for them`);
    reader.takeAhead(read, this.poller.readArea, at);
    s.delivered = reader;
    this.wakeReader(s);
  }

  /** Wakes the socket's first reader. */
  private wakeReader(s: NativeSocket): void {
    this.parking.wake(s.readers.shift()!);
    this.syncWant(s);
  }

  /**
   * @internal The readers of `s` changed: the poller reads ahead for the
   * first one when it is a `read` (into its length), and for nobody else
   * (accept, recvfrom and readSlot make their own system calls).
   */
  syncWant(s: NativeSocket): void {
    if (s.fd < 0) return;
    const first = s.readers[0];
    this.poller.want(s.fd, first instanceof ReadOp && s.delivered === null ? first.wanted : 0);
  }

  /** @internal Readiness a finished or cancelled reader did not use goes to the next one (not past a reader woken with bytes). */
  passRead(s: NativeSocket): void {
    if (s.readers.length !== 0 && s.delivered === null && (s.readable || s.state === "closed")) this.wakeReader(s);
  }

  /** @internal The reader woken with read-ahead bytes returns them (or fails): the readers behind it go on. */
  releaseDelivered(s: NativeSocket): void {
    s.delivered = null;
    this.syncWant(s);
    this.passRead(s);
  }

  // -- queued sends ------------------------------------------------------------------

  /** @internal Queues a write's bytes for the next call into the addon; false when they do not fit. */
  stage(s: NativeSocket, buf: Uint8Array, off: number, len: number): boolean {
    const poller = this.poller;
    if (len > STAGE_MAX || len === 0) return false;
    const index = poller.stats.sends + poller.staged;
    if (!poller.stage(s.fd, buf, off, len)) return false;
    s.lastStaged = index;
    return true;
  }

  /** @internal Whether `s` has queued sends not submitted yet. */
  hasStaged(s: NativeSocket): boolean {
    return s.lastStaged >= this.poller.stats.sends;
  }

  /** @internal Submits the queued sends now. */
  submitSends(): void {
    this.poller.flush();
  }

  /**
   * What a queued send did not send joins the socket's unsent bytes, in order (an
   * error ends the stream's sending: thrown by the next write).
   */
  private onSend(fd: number, result: number, unsent: Uint8Array): void {
    const s = this.byFd[fd]!;
    if (s.sendError !== null) return;
    if (result >= 0 || result === NOT_SENT || wouldBlock(result)) {
      s.writable = false;
      s.unsent = s.unsent === null ? unsent.slice() : Buffer.concat([s.unsent, unsent]);
    } else {
      s.sendError = errnoException(result, "write");
      this.unsentGone(s);
    }
  }

  /**
   * @internal Sends what it can of the unsent bytes; true once they are out (or an
   * error ended it, now in `sendError`), false while the socket is not writable.
   */
  pushUnsent(s: NativeSocket): boolean {
    const data = s.unsent!;
    if (!s.writable) return false;
    const n = this.sys.write(s.fd, data, 0, data.length);
    if (n === data.length || (n < 0 && !wouldBlock(n))) {
      if (n < 0) s.sendError = errnoException(n, "write");
      this.unsentGone(s);
      return true;
    }
    if (n > 0) s.unsent = data.subarray(n);
    s.writable = false;
    return false;
  }

  /** @internal Whether every byte of the writes that returned is out: queued sends are sent now, the unsent bytes as far as they go. */
  sendsOut(s: NativeSocket): boolean {
    if (this.hasStaged(s)) this.submitSends();
    return s.unsent === null || this.pushUnsent(s);
  }

  /** The unsent bytes went out (or an error ended them): a pending shutdown happens, waiting closes go on. */
  private unsentGone(s: NativeSocket): void {
    s.unsent = null;
    if (s.shutPending) this.shutSend(s);
    if (s.closers.length !== 0) this.parking.wakeAll(s.closers);
  }

  /** Shuts the sending side down (the unsent bytes, if any, went out first). */
  private shutSend(s: NativeSocket): void {
    s.shutPending = false;
    if (s.fd >= 0) this.sys.shutdown(s.fd, 1);
  }

  /** @internal A connect or sendto met a socket that is not writable: the next edge says when it is. */
  waitWritable(s: NativeSocket): void {
    s.writable = false;
  }

  /** @internal */
  isWritable(s: NativeSocket): boolean {
    return s.writable;
  }

  /** @internal The same for writers (a write in progress keeps the side). */
  passWrite(s: NativeSocket): void {
    if (s.writers.length !== 0 && (s.writing === null || s.state === "closed") && (s.writable || s.state === "closed")) {
      this.parking.wake(s.writers.shift()!);
    }
  }

  // -- fds --------------------------------------------------------------------------

  /** @internal The socket's fd, made and registered on first need. */
  fdOf(s: NativeSocket, what: string): number {
    if (s.fd >= 0) return s.fd;
    const fd = this.sys.socket(familyOf(s.kind), typeOf(s.kind));
    if (fd < 0) throw errnoException(fd, "socket", `(${what})`);
    this.attach(s, fd);
    return fd;
  }

  /** @internal Registers `fd` as `s`'s, for both directions, edge-triggered. */
  attach(s: NativeSocket, fd: number): void {
    try {
      this.poller.add(fd, READABLE | WRITABLE, "edge");
    } catch (error) {
      this.sys.close(fd);
      throw error;
    }
    s.fd = fd;
    s.readable = true;
    s.writable = true;
    s.hup = false;
    this.byFd[fd] = s;
    this.live.add(s);
  }

  /** @internal Unregisters and closes `s`'s fd (the socket object lives on). */
  detach(s: NativeSocket): void {
    const fd = s.fd;
    if (fd < 0) return;
    s.fd = -1;
    if (this.byFd[fd] === s) this.byFd[fd] = undefined;
    this.live.delete(s);
    if (this.destroyed) {
      this.sys.close(fd);
      return;
    }
    try {
      this.poller.close(fd);
    } catch {
      // close(2) lets go of the number even when it reports an error (EINTR,
      // EIO): the fd is gone, and the socket's close goes on.
    }
  }

  // -- the Backend contract ------------------------------------------------------

  socket(kind: SocketKind): Socket {
    return new NativeSocket(kind, this);
  }

  bindAndListen(sock: Socket, addr: Address, options: Required<ListenOptions>): B.Operation<void> {
    return new ListenOp(this, sock as NativeSocket, addr, options);
  }

  accept(sock: Socket): B.Operation<[Socket, Address]> {
    return new AcceptOp(this, sock as NativeSocket, "accept");
  }

  connect(sock: Socket, addr: Address): B.Operation<void> {
    return new ConnectOp(this, sock as NativeSocket, addr);
  }

  read(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<number> {
    const s = sock as NativeSocket;
    return reuseRead(s, buf, off, len) ?? new ReadOp(this, s, "read", buf, off, len);
  }

  write(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<void> {
    const s = sock as NativeSocket;
    return reuseWrite(s, buf, off, len) ?? new WriteOp(this, s, "write", buf, off, len);
  }

  recvfrom(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<[number, Address]> {
    return new RecvOp(this, sock as NativeSocket, "recvfrom", buf, off, len);
  }

  sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address): B.Operation<number> {
    return new SendToOp(this, sock as NativeSocket, buf, off, len, addr as InetAddress);
  }

  shutdown(sock: Socket, how: ShutdownCommand): void {
    const s = sock as NativeSocket;
    if (s.fd < 0) return;
    if (how !== "receive" && !s.sendShut) {
      s.sendShut = true;
      // Writes that returned are not cut off: their bytes go out first.
      if (this.sendsOut(s)) this.shutSend(s);
      else s.shutPending = true;
      this.parking.wakeAll(s.writers); // they fail with EPIPE when they retry
    }
    if (how !== "send" && !s.receiveShut) {
      s.receiveShut = true;
      this.sys.shutdown(s.fd, 0);
      this.parking.wakeAll(s.readers);
      this.syncWant(s);
    }
  }

  close(sock: Socket): B.Operation<void> {
    return new CloseOp(this, sock as NativeSocket, "close");
  }

  closeNow(sock: Socket): void {
    const s = sock as NativeSocket;
    if (s.state === "closed") return;
    // Queued sends go out; unsent bytes the kernel does not take now are lost with the fd.
    if (s.fd >= 0) this.sendsOut(s);
    s.state = "closed";
    s.writing = null;
    s.delivered = null;
    s.unsent = null;
    // No domain may start duplicating the fd any more; those doing it finish first.
    s.guard?.seal();
    this.detach(s);
    s.unlinkPath();
    // Waiters retry, see the socket closed and throw SocketClosed.
    this.parking.wakeAll(s.readers);
    this.parking.wakeAll(s.writers);
    this.parking.wakeAll(s.closers);
  }

  localAddress(sock: Socket): Address {
    return localAddressOf(this.sys, sock as NativeSocket);
  }

  /**
   * Describes a listening socket for another domain: its fd (each domain
   * has its own, see {@link NativeBackend.adopt}) and a guard made on the
   * first share, sealed before the fd is closed.
   */
  share(sock: Socket): SharedSocket {
    return describeListener(this.sys, sock as NativeSocket);
  }

  /**
   * A listener of this domain over another domain's listening socket: a
   * `dup` of its fd (made while the owner's guard is pinned), registered in
   * this domain's set like any listener. Domains race for each connection:
   * the losers' `accept` gets `EAGAIN` and parks again (see `adoptListener`).
   */
  adopt(shared: SharedSocket): Socket {
    return adoptListener(this, new NativeSocket(shared.kind, this), shared);
  }

  /**
   * Core's `finaliser`: the domain stops. Also closes the sockets still open
   * (a worker domain has no `drain`); the set itself goes with the thread.
   */
  override finaliser(): void {
    super.finaliser();
    for (const s of [...this.live]) this.closeNow(s);
  }

  drain(): Promise<void> {
    this.timers.clear();
    for (const s of [...this.live]) this.closeNow(s); // close(2) at once: nothing to wait for
    if (this.destroyed) return Promise.resolve();
    this.destroyed = true;
    this.poller.destroy();
    return afterHandleClose(); // the set's fd with it
  }
}

/**
 * Makes a native backend for `@bobbin/unix`'s `run`: pass `nativeBackend`
 * itself as the `backend` factory. It is defined with `defineBackend`, so
 * every worker domain of the run makes its own (its own epoll set, in its
 * own thread's loop), and listening sockets can be given to `B.call` /
 * `B.parallel`. For options, define a factory of your own with
 * `defineBackend` (an inline `() => nativeBackend({ … })` serves dom0 only).
 *
 * @example
 * ```ts
 * import { defineBackend, run } from "@bobbin/unix";
 * import { nativeBackend } from "@bobbin/native-poll";
 * await run(main, { backend: nativeBackend });                // in every domain
 * export const small = defineBackend(import.meta.url, "small", () => nativeBackend({ pool: { slotSize: 4096 } }));
 * await run(main, { backend: small });
 * ```
 * @throws NativeUnavailable when the addon is not built (the message says how to build it).
 * @throws RangeError for bad options.
 */
export const nativeBackend: (options?: NativeBackendOptions | number) => NativeBackend = defineBackend(
  import.meta.url,
  "native",
  function nativeBackend(options?: NativeBackendOptions | number): NativeBackend {
    return new NativeBackend(typeof options === "object" && options !== null ? options : {});
  },
);
