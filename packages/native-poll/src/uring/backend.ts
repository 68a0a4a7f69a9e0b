/**
 * The io_uring backend for `@bobbin/unix` (Linux): stream sockets are served
 * by completions instead of readiness. A listener has one multishot accept
 * in flight and a connection one multishot recv into a ring of provided
 * buffers, so data is read ahead into buffers the kernel picks and `read`
 * copies it out; `write` copies into a staging slot, queues one SEND, and
 * returns while it is in flight. Requests are written into the shared SQ
 * ring from JavaScript; the addon enters the ring once per batch and calls
 * JavaScript once per batch of completions, which it reads from the shared
 * CQ ring (src/uring/ring.ts). Datagrams and `connect` use one-shot polls on
 * the ring and the raw system calls of the native backend.
 *
 * Per socket and direction there is at most one request in flight (one
 * recv, one accept, one send, one poll each way), so their user data (the
 * fd, and a tag: the fd's generation and the kind) names each of them, and
 * a socket's fd is closed only once its last request completed: completions
 * never meet a reused fd number.
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
import { errnoException } from "../errors.js";
import type { NativeAddressOut, NativeSyscalls } from "../load.js";
import { afterHandleClose, BackendFailure, Parking } from "../parking.js";
import { adoptListener, ConnectOp, describeListener, ListenOp, localAddressOf, reuseRead, reuseWrite, SendToOp } from "../sockets.js";
import { Errno, familyOf, typeOf } from "../syscalls.js";
import { AcceptOp, CloseOp, ReadOp, RecvOp, WriteOp } from "./ops.js";
import { Ring } from "./ring.js";
import { UringSocket } from "./socket.js";
import { requireUring } from "./support.js";

// The kind of a request, in the low bits of its tag; the fd's generation above.
const RECV = 1;
const ACCEPT = 2;
const SEND = 3;
const POLL_IN = 4;
const POLL_OUT = 5;
const CANCEL = 6;
const KIND_BITS = 4;
const KIND_MASK = (1 << KIND_BITS) - 1;
const GENERATIONS = 1 << 27;

/** Connections a listener accepts ahead of `accept` before its multishot accept is cancelled. */
const ACCEPT_AHEAD = 16;

const TASK_RUN = { auto: 0, defer: 1, coop: 2, signal: 3 } as const;

const { ENOBUFS, ECANCELED, ECONNABORTED, EPROTO } = Errno;

/**
 * Options of {@link uringBackend}.
 *
 * @example
 * ```ts
 * export const big = defineBackend(import.meta.url, "big", () => uringBackend({ buffers: 2048, bufferSize: 4096 }));
 * ```
 * @throws never (a type; {@link uringBackend} validates it).
 */
export interface UringBackendOptions {
  /** Submission queue entries (the completion queue has four times as many). Default 1024. */
  readonly entries?: number;
  /** Provided buffers the kernel receives into, shared by every connection: a power of two ≤ 32768. Default 512. */
  readonly buffers?: number;
  /** Bytes per provided buffer. Default 16384. */
  readonly bufferSize?: number;
  /** Staging slots that sends point at, shared by every connection. Default 256. */
  readonly staging?: number;
  /** Bytes per staging slot: the largest piece of a write sent at once. Default 16384. */
  readonly stagingSize?: number;
  /**
   * Bytes a connection may receive ahead of `read` before its recv is
   * cancelled, until `read` has taken half of them; what arrives before the
   * cancellation lands is kept too (a multishot recv fills up to 32 buffers
   * per run of completion work). Default 4 × `bufferSize`.
   */
  readonly readAhead?: number;
  /**
   * How the kernel runs completion work: `"defer"` (IORING_SETUP_DEFER_TASKRUN
   * + SINGLE_ISSUER: only when the ring is entered), `"coop"`
   * (COOP_TASKRUN: at the next system call, without interrupting), `"signal"`
   * (neither: the kernel interrupts the thread), `"auto"` (default: `"defer"`
   * where the kernel has it, Linux 6.1, else `"coop"`).
   */
  readonly taskRun?: "auto" | "defer" | "coop" | "signal";
  /** Enter the ring when the run queue empties, before waiting in Node's loop (see {@link UringBackend.select}). Default `true`. */
  readonly eagerPoll?: boolean;
}

function integerOption(options: UringBackendOptions, name: keyof UringBackendOptions, fallback: number, min: number, max: number): number {
  const v = options[name] ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`uringBackend({ ${name} }): an integer in ${min} … ${max}, got ${String(v)}`);
  }
  return v;
}

/**
 * The `@bobbin/unix` backend on io_uring. Make one per run with
 * {@link uringBackend}.
 *
 * @example
 * ```ts
 * import { run } from "@bobbin/unix";
 * import { uringAvailable, uringBackend } from "@bobbin/native-poll";
 * if (uringAvailable()) await run(main, { backend: uringBackend });
 * ```
 * @throws UringUnavailable (from the constructor) where io_uring cannot work (see `uringSupport`).
 * @throws RangeError (from the constructor) for bad options.
 */
export class UringBackend extends NodeLoop implements Backend {
  readonly name = "uring";
  /**
   * Counters for tuning: batches of completions delivered by Node's loop,
   * ring entries made by `select` itself, and the completions reaped.
   */
  readonly stats: { readonly batches: number; readonly submits: number; readonly completions: number };
  /** @internal */ readonly ring: Ring;
  /** @internal */ readonly sys: NativeSyscalls;
  /** @internal */ readonly solSocket: number;
  /** @internal */ readonly soReuseAddr: number;
  /** @internal Received bytes a connection may hold before its recv is paused. */
  readonly readAhead: number;
  /** @internal Sockets with an open fd. */
  readonly live = new Set<UringSocket>();
  private readonly byFd: (UringSocket | undefined)[] = [];
  private generation = 0;
  /** Recvs ended for want of buffers, armed again as buffers come back. */
  private readonly starved: UringSocket[] = [];
  /** Writes waiting for a staging slot. */
  private readonly slotWaiters: WriteOp[] = [];
  /** @internal Operations parked on completions: while there are some, the ring keeps Node alive. */
  readonly parking: Parking;
  private destroyed = false;
  private readonly eager: boolean;
  /** What failed in the addon's pump (in a Node callback): thrown by the next `select`, which fails the run. */
  private readonly failure = new BackendFailure(() => this.interrupt());

  /**
   * @throws UringUnavailable where io_uring cannot work.
   * @throws RangeError for bad options.
   */
  constructor(options: UringBackendOptions = {}) {
    super("microtask");
    const entries = integerOption(options, "entries", 1024, 1, 32768);
    const buffers = integerOption(options, "buffers", 512, 1, 32768);
    if ((buffers & (buffers - 1)) !== 0) throw new RangeError(`uringBackend({ buffers }): a power of two, got ${buffers}`);
    const bufferSize = integerOption(options, "bufferSize", 16384, 1, 1 << 24);
    const staging = integerOption(options, "staging", 256, 1, 1 << 16);
    const stagingSize = integerOption(options, "stagingSize", 16384, 1, 1 << 24);
    this.readAhead = integerOption(options, "readAhead", 4 * bufferSize, 1, 2 ** 31 - 1);
    const taskRun = options.taskRun ?? "auto";
    if (!Object.hasOwn(TASK_RUN, taskRun)) {
      throw new RangeError(`uringBackend({ taskRun }): "auto", "defer", "coop" or "signal", got ${String(taskRun)}`);
    }
    const addon = requireUring();
    const native = addon as unknown as { syscalls: NativeSyscalls; sockopts: Record<string, number> };
    this.sys = native.syscalls;
    this.solSocket = native.sockopts.SOL_SOCKET!;
    this.soReuseAddr = native.sockopts.SO_REUSEADDR!;
    this.eager = options.eagerPoll ?? true;
    this.ring = new Ring(addon, { entries, buffers, bufferSize, staging, stagingSize, taskRun: TASK_RUN[taskRun] }, this);
    this.ring.handle.unref();
    this.parking = new Parking(this.ring.handle);
    this.stats = this.ring.stats;
  }

  // -- events -------------------------------------------------------------------

  /**
   * Core's `select`. Requests written since the last entry are submitted
   * here when the addon's pump is not about to do it, and while operations
   * are parked the ring is entered without waiting and its completions
   * handled at once (`block = false`: a busy scheduler sees I/O; `block =
   * true`, with `eagerPoll`: what arrived while the tasks ran). Only when
   * nothing is ready does a blocking `select` return a Promise, settled by
   * the batch the addon delivers from Node's loop. When the pump failed in
   * a Node callback (a failed `io_uring_enter`…), `select` throws that
   * error, and core fails the run with it.
   */
  override select(block: boolean, cancelled: readonly B.Uid[]): B.Signal[] | Promise<B.Signal[]> {
    this.failure.check();
    const ring = this.ring;
    if (!this.destroyed && !ring.pumping && (ring.pending || (this.parking.count !== 0 && (!block || this.eager)))) {
      const reaped = this.stats.completions;
      ring.submit();
      // Completions may have woken tasks: nothing to wait for.
      if (this.stats.completions !== reaped) return super.select(false, cancelled);
    }
    return super.select(block, cancelled);
  }

  /**
   * Core's `pending`: requests written and not submitted yet, or operations
   * parked on completions — `select` submits the ones and enters the ring
   * for the others.
   */
  pending(): boolean {
    return !this.destroyed && (this.parking.count !== 0 || this.ring.pending);
  }

  // -- completions --------------------------------------------------------------

  /** @internal The addon's pump failed: the run fails with it (see {@link UringBackend.select}). */
  failed(error: Error): void {
    this.failure.fail(error);
  }

  /** @internal The ring's completions, one by one. */
  complete(fd: number, tag: number, res: number, flags: number): void {
    const kind = tag & KIND_MASK;
    if (kind === CANCEL) return; // the cancelled request says how it ended
    const s = this.byFd[fd];
    if (s === undefined || s.gen !== tag >>> KIND_BITS) {
      this.stray(kind, res, flags);
      return;
    }
    if ((flags & this.ring.constants.CQE_F_MORE) === 0) s.requests--;
    switch (kind) {
      case RECV:
        this.received(s, res, flags);
        break;
      case ACCEPT:
        this.accepted(s, res, flags);
        break;
      case SEND:
        this.sent(s, res);
        break;
      default:
        this.polled(s, kind, res);
    }
    if (s.closing) this.finishClose(s);
  }

  /** A completion for a socket closed without waiting (finaliser, drain): what it carries goes back. */
  private stray(kind: number, res: number, flags: number): void {
    if ((flags & this.ring.constants.CQE_F_BUFFER) !== 0) {
      this.ring.buffersInRing--;
      this.giveBuffer(flags >>> this.ring.constants.CQE_BUFFER_SHIFT);
    }
    if (kind === ACCEPT && res >= 0) this.sys.close(res);
  }

  private received(s: UringSocket, res: number, flags: number): void {
    const c = this.ring.constants;
    if ((flags & c.CQE_F_BUFFER) !== 0) {
      this.ring.buffersInRing--;
      const bid = flags >>> c.CQE_BUFFER_SHIFT;
      if (res > 0 && !s.receiveShut && s.state !== "closed") {
        s.chunks[s.chunkTail] = bid;
        s.chunks[s.chunkTail + 1] = res;
        s.chunkTail += 2;
        s.queued += res;
      } else {
        this.giveBuffer(bid);
      }
    }
    if ((flags & c.CQE_F_MORE) === 0) {
      s.recvArmed = false;
      if (res === 0) s.eof = true;
      else if (res === ENOBUFS) {
        if (this.ring.buffersInRing === 0) {
          s.recvStarved = true;
          this.starved.push(s);
        }
      } else if (res < 0 && res !== ECANCELED) s.readError = errnoException(res, "read");
      this.armRecv(s);
    } else if (s.queued >= this.readAhead && !s.recvPaused) {
      s.recvPaused = true;
      this.cancel(s, RECV);
    }
    if (s.readers.length !== 0 && (s.queued !== 0 || s.eof || s.readError !== null)) this.parking.wake(s.readers.shift()!);
  }

  private accepted(s: UringSocket, res: number, flags: number): void {
    if (res >= 0) {
      if (s.state === "closed") this.sys.close(res);
      else s.accepted.push(res);
    }
    if ((flags & this.ring.constants.CQE_F_MORE) === 0) {
      s.acceptArmed = false;
      // The connection died before it was taken: go on with the next one.
      if (res < 0 && res !== ECANCELED && res !== ECONNABORTED && res !== EPROTO) s.acceptError = errnoException(res, "accept");
      if (s.readers.length > s.accepted.length) this.armAccept(s); // for acceptors the queue will not serve
    } else if (s.accepted.length >= ACCEPT_AHEAD && !s.acceptPaused) {
      s.acceptPaused = true;
      this.cancel(s, ACCEPT);
    }
    if (s.readers.length !== 0 && (s.accepted.length !== 0 || s.acceptError !== null)) this.parking.wake(s.readers.shift()!);
  }

  private sent(s: UringSocket, res: number): void {
    const slot = s.sendSlot;
    if (res >= 0 && res < s.sendLen && !s.sendCancelled && s.state !== "closed") {
      // MSG_WAITALL stops short only when interrupted: send the rest.
      s.sendOff += res;
      s.sendLen -= res;
      this.ring.send(s.fd, slot, s.sendOff, s.sendLen, this.tag(s, SEND));
      s.requests++;
      return;
    }
    s.sendSlot = -1;
    s.sendOwner = null;
    s.sendCancelled = false;
    this.ring.freeSlot(slot);
    if (this.slotWaiters.length !== 0) this.parking.wake(this.slotWaiters.shift()!);
    if (res < 0 && res !== ECANCELED) s.sendError ??= errnoException(res, "write");
    if (s.shutPending) {
      s.shutPending = false;
      this.sys.shutdown(s.fd, 1);
    }
    if (s.writers.length !== 0) this.parking.wake(s.writers.shift()!);
  }

  private polled(s: UringSocket, kind: number, _res: number): void {
    if (kind === POLL_IN) {
      s.pollIn = false;
      if (s.readers.length !== 0) this.parking.wake(s.readers.shift()!);
    } else {
      s.pollOut = false;
      if (s.writers.length !== 0) this.parking.wake(s.writers.shift()!);
    }
  }

  // -- requests ----------------------------------------------------------------------

  private tag(s: UringSocket, kind: number): number {
    return (s.gen << KIND_BITS) | kind;
  }

  /** @internal Arms the socket's multishot recv, unless it is armed, paused, starved or over. */
  armRecv(s: UringSocket): void {
    if (s.recvArmed || s.recvPaused || s.recvStarved || s.eof || s.readError !== null || s.receiveShut || s.state !== "connected") {
      return;
    }
    s.recvArmed = true;
    s.requests++;
    this.ring.recv(s.fd, this.tag(s, RECV));
  }

  /**
   * @internal Arms the listener's accept, unless it is armed or has an error
   * to report: multishot, or for one connection when the listener is shared
   * across domains (the kernel wakes one accept per connection, the one
   * waiting longest, and a multishot accept would wait in front forever).
   */
  armAccept(s: UringSocket): void {
    if (s.acceptArmed || s.acceptError !== null || s.state !== "listening") return;
    s.acceptArmed = true;
    s.acceptPaused = false;
    s.requests++;
    this.ring.accept(s.fd, this.tag(s, ACCEPT), !s.shared);
  }

  /** @internal A one-shot poll for readability (`readable`) or writability, unless one is in flight. */
  armPoll(s: UringSocket, readable: boolean): void {
    if (readable ? s.pollIn : s.pollOut) return;
    if (readable) s.pollIn = true;
    else s.pollOut = true;
    s.requests++;
    this.ring.poll(s.fd, readable ? this.ring.constants.POLLIN : this.ring.constants.POLLOUT, this.tag(s, readable ? POLL_IN : POLL_OUT));
  }

  /** @internal Sends `len` bytes of staging slot `slot`; `owner` is the parked write they belong to, or null once it returned. */
  send(s: UringSocket, slot: number, len: number, owner: WriteOp | null): void {
    s.sendSlot = slot;
    s.sendOff = 0;
    s.sendLen = len;
    s.sendOwner = owner;
    s.requests++;
    this.ring.send(s.fd, slot, 0, len, this.tag(s, SEND));
  }

  /** @internal Gives up the send in flight (its write was abandoned, or the socket is closing without waiting). */
  abortSend(s: UringSocket): void {
    if (!s.sending || s.sendCancelled) return;
    s.sendCancelled = true;
    this.cancel(s, SEND);
  }

  private cancel(s: UringSocket, kind: number): void {
    this.ring.cancel(s.fd, this.tag(s, kind), this.tag(s, CANCEL));
  }

  /** @internal Gives a provided buffer back; a recv that starved for one is armed again. */
  giveBuffer(bid: number): void {
    this.ring.giveBuffer(bid);
    const s = this.starved.shift();
    if (s !== undefined) {
      s.recvStarved = false;
      this.armRecv(s);
    }
  }

  /**
   * @internal Copies up to `len` received bytes into `buf[off…]` and returns
   * how many; emptied buffers go back to the kernel, and a recv paused for
   * read-ahead goes on once half of it is read.
   */
  take(s: UringSocket, buf: Uint8Array, off: number, len: number): number {
    const memory = this.ring.buffers;
    const size = this.ring.bufferSize;
    const chunks = s.chunks;
    let n = 0;
    while (n < len && s.chunkHead !== s.chunkTail) {
      const bid = chunks[s.chunkHead]!;
      const length = chunks[s.chunkHead + 1]!;
      const from = bid * size + s.chunkOff;
      const count = Math.min(length - s.chunkOff, len - n);
      buf.set(memory.subarray(from, from + count), off + n);
      n += count;
      s.chunkOff += count;
      if (s.chunkOff === length) {
        s.chunkHead += 2;
        s.chunkOff = 0;
        this.giveBuffer(bid);
      }
    }
    if (s.chunkHead === s.chunkTail) s.chunkHead = s.chunkTail = 0;
    s.queued -= n;
    if (s.recvPaused && s.queued <= this.readAhead >> 1) {
      s.recvPaused = false;
      this.armRecv(s);
    }
    return n;
  }

  /** Gives every received chunk back (the socket is closed or shut for receiving). */
  private dropReceived(s: UringSocket): void {
    for (let i = s.chunkHead; i < s.chunkTail; i += 2) this.giveBuffer(s.chunks[i]!);
    s.chunkHead = s.chunkTail = 0;
    s.chunkOff = 0;
    s.queued = 0;
  }

  // -- parking -----------------------------------------------------------------------

  /** @internal A write parks until a staging slot is free. */
  parkForSlot(op: WriteOp): void {
    this.parking.park(this.slotWaiters, op);
  }

  /** @internal A write no longer waits for a staging slot; whether it did. */
  unparkForSlot(op: WriteOp): boolean {
    return this.parking.unpark(this.slotWaiters, op);
  }

  /** @internal Readiness a finished or cancelled reader did not use goes to the next one. */
  passRead(s: UringSocket): void {
    if (s.readers.length === 0) return;
    if (s.queued !== 0 || s.eof || s.readError !== null || s.accepted.length !== 0 || s.acceptError !== null || s.state === "closed") {
      this.parking.wake(s.readers.shift()!);
    }
  }

  /** @internal The sending side is free: the next queued write goes on. */
  passWrite(s: UringSocket): void {
    if (s.writers.length !== 0 && s.writing === null && !s.sending) this.parking.wake(s.writers.shift()!);
  }

  /** @internal A connect or sendto met a socket that is not writable: a one-shot poll says when it is. */
  waitWritable(s: UringSocket): void {
    this.armPoll(s, false);
  }

  /** @internal */
  isWritable(s: UringSocket): boolean {
    return !s.pollOut;
  }

  // -- fds --------------------------------------------------------------------------

  /** @internal The socket's fd, made on first need. */
  fdOf(s: UringSocket, what: string): number {
    if (s.fd >= 0) return s.fd;
    const fd = this.sys.socket(familyOf(s.kind), typeOf(s.kind));
    if (fd < 0) throw errnoException(fd, "socket", `(${what})`);
    this.attach(s, fd);
    return fd;
  }

  /** @internal `fd` is `s`'s, under a new generation. */
  attach(s: UringSocket, fd: number): void {
    this.generation = (this.generation + 1) % GENERATIONS || 1;
    s.fd = fd;
    s.gen = this.generation;
    this.byFd[fd] = s;
    this.live.add(s);
  }

  /** @internal Closes `s`'s fd now (no request may be in flight, or they are abandoned). */
  detach(s: UringSocket): void {
    const fd = s.fd;
    if (fd < 0) return;
    s.fd = -1;
    s.gen = 0;
    s.requests = 0;
    if (this.byFd[fd] === s) this.byFd[fd] = undefined;
    this.live.delete(s);
    this.sys.close(fd);
  }

  /** The socket's last request completed: its fd goes, and the `close` operations waiting for that return. */
  private finishClose(s: UringSocket): void {
    if (s.requests !== 0) return;
    s.closing = false;
    this.detach(s);
    this.parking.wakeAll(s.closers);
  }

  // -- the Backend contract ------------------------------------------------------

  socket(kind: SocketKind): Socket {
    return new UringSocket(kind, this);
  }

  bindAndListen(sock: Socket, addr: Address, options: Required<ListenOptions>): B.Operation<void> {
    return new ListenOp<UringBackend, UringSocket>(this, sock as UringSocket, addr, options);
  }

  accept(sock: Socket): B.Operation<[Socket, Address]> {
    return new AcceptOp(this, sock as UringSocket, "accept");
  }

  connect(sock: Socket, addr: Address): B.Operation<void> {
    return new ConnectOp(this, sock as UringSocket, addr);
  }

  read(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<number> {
    const s = sock as UringSocket;
    return reuseRead(s, buf, off, len) ?? new ReadOp(this, s, "read", buf, off, len);
  }

  write(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<void> {
    const s = sock as UringSocket;
    return reuseWrite(s, buf, off, len) ?? new WriteOp(this, s, "write", buf, off, len);
  }

  recvfrom(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<[number, Address]> {
    return new RecvOp(this, sock as UringSocket, "recvfrom", buf, off, len);
  }

  sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address): B.Operation<number> {
    return new SendToOp(this, sock as UringSocket, buf, off, len, addr as InetAddress);
  }

  /** Shuts a direction down; the sending side after the send in flight, if any. */
  shutdown(sock: Socket, how: ShutdownCommand): void {
    const s = sock as UringSocket;
    if (s.fd < 0) return;
    if (how !== "receive" && !s.sendShut) {
      s.sendShut = true;
      if (s.sending) s.shutPending = true;
      else this.sys.shutdown(s.fd, 1);
      this.parking.wakeAll(s.writers); // they fail with EPIPE when they retry
    }
    if (how !== "send" && !s.receiveShut) {
      s.receiveShut = true;
      this.sys.shutdown(s.fd, 0);
      this.dropReceived(s);
      if (s.recvArmed && !s.recvPaused) {
        s.recvPaused = true;
        this.cancel(s, RECV);
      }
      this.parking.wakeAll(s.readers);
    }
  }

  close(sock: Socket): B.Operation<void> {
    return new CloseOp(this, sock as UringSocket, "close");
  }

  /**
   * Closes the socket for the program at once (its waiters throw
   * `SocketClosed`) and cancels its requests, except a send whose write had
   * returned: that one is let through, and the fd closed once it completed.
   */
  closeNow(sock: Socket): void {
    const s = sock as UringSocket;
    if (s.state === "closed") return;
    s.state = "closed";
    s.writing = null;
    s.guard?.seal();
    s.unlinkPath();
    if (s.fd >= 0) {
      if (s.recvArmed && !s.recvPaused) this.cancel(s, RECV);
      if (s.acceptArmed && !s.acceptPaused) this.cancel(s, ACCEPT);
      if (s.pollIn) this.cancel(s, POLL_IN);
      if (s.pollOut) this.cancel(s, POLL_OUT);
      if (s.sendOwner !== null) this.abortSend(s);
      this.dropReceived(s);
      for (const fd of s.accepted) this.sys.close(fd);
      s.accepted.length = 0;
      s.closing = true;
    }
    this.parking.wakeAll(s.readers);
    this.parking.wakeAll(s.writers);
    for (const op of this.slotWaiters.filter((w) => w.sock === s)) {
      this.unparkForSlot(op);
      op.ready();
    }
    if (s.closing) this.finishClose(s);
  }

  localAddress(sock: Socket): Address {
    return localAddressOf(this.sys, sock as UringSocket);
  }

  /** @internal The peer of a connected socket (`{ path: "" }` for Unix sockets). */
  peerAddress(s: UringSocket): Address {
    if (s.kind === "unix") return { path: "" };
    const out: NativeAddressOut = {};
    return this.sys.getpeername(s.fd, out) === 0 ? (out as InetAddress) : { host: "", port: 0 };
  }

  /**
   * Describes a listening socket for another domain (see the native
   * backend's `share`). From now on it accepts one connection per waiting
   * `accept` (its multishot accept, if armed, is cancelled).
   */
  share(sock: Socket): SharedSocket {
    const s = sock as UringSocket;
    if (!s.shared) {
      s.shared = true;
      if (s.acceptArmed && !s.acceptPaused) {
        s.acceptPaused = true;
        this.cancel(s, ACCEPT);
      }
    }
    return describeListener(this.sys, s);
  }

  /** A listener of this domain over a `dup` of another domain's listening socket; already `closed` when the owner closed it first. */
  adopt(shared: SharedSocket): Socket {
    const s = new UringSocket(shared.kind, this);
    s.shared = true; // one accept per waiting `accept`, as for the owner's listener once shared
    return adoptListener(this, s, shared);
  }

  /**
   * Core's `finaliser`: the domain stops. Closes every socket still open,
   * sends in flight included, submits the cancellations and lets the fds go
   * (requests that have not completed yet hold their sockets in the kernel
   * until they do; their completions are strays then).
   */
  override finaliser(): void {
    super.finaliser();
    this.stopAll();
  }

  /** Closes what is left, then the ring; settles once the ring's handle is gone from Node's loop. */
  drain(): Promise<void> {
    this.timers.clear();
    this.stopAll();
    if (this.destroyed) return Promise.resolve();
    this.destroyed = true;
    this.ring.handle.destroy();
    return afterHandleClose(); // the ring with it
  }

  private stopAll(): void {
    for (const s of [...this.live]) {
      this.closeNow(s);
      this.abortSend(s);
    }
    if (this.destroyed) return;
    this.ring.submit();
    for (const s of [...this.live]) {
      s.closing = false;
      this.detach(s);
      this.parking.wakeAll(s.closers);
    }
  }
}

/**
 * Makes an io_uring backend for `@bobbin/unix`'s `run` (Linux 6.0 or later):
 * pass `uringBackend` itself as the `backend` factory. Defined with
 * `defineBackend`, so every worker domain of the run makes its own (its own
 * ring, in its own thread), and listening sockets can be given to `B.call` /
 * `B.parallel`. For options, define a factory of your own with
 * `defineBackend`.
 *
 * @example
 * ```ts
 * import { run } from "@bobbin/unix";
 * import { nativeBackend, uringAvailable, uringBackend } from "@bobbin/native-poll";
 * await run(main, { backend: uringAvailable() ? uringBackend : nativeBackend });
 * ```
 * @throws UringUnavailable where io_uring cannot work (its `reason` says why; see `uringSupport`).
 * @throws RangeError for bad options.
 */
export const uringBackend: (options?: UringBackendOptions | number) => UringBackend = defineBackend(
  import.meta.url,
  "uring",
  function uringBackend(options?: UringBackendOptions | number): UringBackend {
    return new UringBackend(typeof options === "object" && options !== null ? options : {});
  },
);
