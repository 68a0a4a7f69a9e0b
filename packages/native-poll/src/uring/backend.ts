/**
 * The io_uring backend for `@bobbin/unix` (Linux): stream sockets are served
 * by completions instead of readiness. A listener has one multishot accept
 * in flight and a connection one multishot recv into a ring of provided
 * buffers, so data is read ahead into buffers the kernel picks and `read`
 * copies it out; `write` copies into a staging slot, queues one SEND, and
 * returns while it is in flight. Requests are written into the shared SQ
 * ring from JavaScript (`ring.ts`, under the user data of `requests.ts`);
 * the addon enters the ring once per batch and calls JavaScript once per
 * batch of completions (`completions.ts`). Datagrams and `connect` use
 * one-shot polls on the ring and the raw system calls of the native backend.
 * This file holds the contract's entry points.
 */
import type * as B from "@bobbin/core";
import type * as L from "@bobbin/core/lowlevel";
import { describe } from "@bobbin/core/lowlevel";
import type { Chunk, ShutdownCommand, Socket, SocketKind } from "@bobbin/unix";
import { afterHandleClose, type BufferOp, ParkedCount, ReadOp, type SharedSocket } from "@bobbin/unix/backend";
import type { NativeSyscalls } from "../load.js";
import { RawBackend } from "../raw/backend.js";
import { complete } from "./completions.js";
import { shareAccepts } from "./listener.js";
import { AcceptOp, CloseOp, RecvOp, WriteOp } from "./ops.js";
import type { UringBackend, UringBackendOptions } from "./options.js";
import { UringIo } from "./requests.js";
import { Ring } from "./ring.js";
import { UringSocket } from "./socket.js";
import { sendPiece, shutdown } from "./stream.js";
import { requireUring } from "./support.js";

const TASK_RUN = { auto: 0, defer: 1, coop: 2, signal: 3 } as const;

function integerOption(options: UringBackendOptions, name: keyof UringBackendOptions, fallback: number, min: number, max: number): number {
  const v = options[name] ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`uringBackend({ ${name} }): an integer in ${min} … ${max}, got ${describe(v)}`);
  }
  return v;
}

/**
 * The ring, its buffers and what the backend keeps of it.
 * @throws UringUnavailable where io_uring cannot work; RangeError for bad options.
 */
function uringIo(options: UringBackendOptions, failed: (error: Error) => void): UringIo {
  const entries = integerOption(options, "entries", 1024, 1, 32768);
  const buffers = integerOption(options, "buffers", 512, 1, 32768);
  if ((buffers & (buffers - 1)) !== 0) throw new RangeError(`uringBackend({ buffers }): a power of two, got ${buffers}`);
  const bufferSize = integerOption(options, "bufferSize", 16384, 1, 1 << 24);
  const staging = integerOption(options, "staging", 256, 1, 1 << 16);
  const stagingSize = integerOption(options, "stagingSize", 16384, 1, 1 << 24);
  const readAhead = integerOption(options, "readAhead", 4 * bufferSize, 1, 2 ** 31 - 1);
  const taskRun = options.taskRun ?? "auto";
  if (!Object.hasOwn(TASK_RUN, taskRun)) {
    throw new RangeError(`uringBackend({ taskRun }): "auto", "defer", "coop" or "signal", got ${describe(taskRun)}`);
  }
  const addon = requireUring();
  const native = addon as unknown as { syscalls: NativeSyscalls; sockopts: Record<string, number> };
  let io: UringIo | null = null;
  const sink = { complete: (fd: number, tag: number, res: number, flags: number) => complete(io!, fd, tag, res, flags), failed };
  const ring = new Ring(addon, { entries, buffers, bufferSize, staging, stagingSize, taskRun: TASK_RUN[taskRun] }, sink);
  ring.handle.unref();
  const { SOL_SOCKET, SO_REUSEADDR } = native.sockopts;
  io = new UringIo(ring, native.syscalls, SOL_SOCKET!, SO_REUSEADDR!, new ParkedCount(ring.handle), readAhead);
  return io;
}

/**
 * @internal The `@bobbin/unix` backend on io_uring. Made by `uringBackend`.
 * @throws UringUnavailable (from the constructor) where io_uring cannot work (see `uringSupport`).
 * @throws RangeError (from the constructor) for bad options.
 */
export class IoUringBackend extends RawBackend<UringSocket, UringIo> implements UringBackend {
  readonly name = "uring";

  constructor(options: UringBackendOptions = {}) {
    super((failed) => uringIo(options, failed), { Write: WriteOp, Accept: AcceptOp, Recv: RecvOp, Close: CloseOp }, options.eagerPoll);
  }

  /**
   * Counters for tuning: batches of completions delivered by Node's loop,
   * ring entries made by `select` itself, and the completions reaped.
   */
  get stats(): { readonly batches: number; readonly submits: number; readonly completions: number } {
    return this.io.ring.stats;
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
  override select(block: boolean, cancelled: readonly L.Uid[]): L.Signal[] | Promise<L.Signal[]> {
    this.failure.check();
    const io = this.io;
    const ring = io.ring;
    if (!io.destroyed && !ring.pumping && (ring.pending || this.pollsFirst(block))) {
      const reaped = ring.stats.completions;
      ring.submit();
      // Completions may have woken tasks: nothing to wait for.
      if (ring.stats.completions !== reaped) return super.select(false, cancelled);
    }
    return super.select(block, cancelled);
  }

  /**
   * Core's `pending`: requests written and not submitted yet, or operations
   * parked on completions — `select` submits the ones and enters the ring
   * for the others.
   */
  pending(): boolean {
    const io = this.io;
    return !io.destroyed && (io.parked.count !== 0 || io.ring.pending);
  }

  // -- the Backend contract ------------------------------------------------------

  protected make(kind: SocketKind): UringSocket {
    return new UringSocket(kind, this, this.io.parked);
  }

  protected newRead(s: UringSocket): BufferOp<number> {
    return new ReadOp(s);
  }

  /** The provided buffers the multishot recv filled, lent whole (back to the ring once released). */
  readChunk(sock: Socket): B.Operation<Chunk | null> {
    return (sock as UringSocket).readChunk();
  }

  /** A piece that fits a staging slot, while no send of the socket is in flight and no write waits for a slot. */
  protected sendNow(s: UringSocket, buf: Uint8Array, off: number, len: number): boolean {
    const io = this.io;
    if (s.sendError !== null || s.sending || len > io.ring.stagingSize || io.slotWaiters.length !== 0) return false;
    return sendPiece(io, s, buf, off, len, null);
  }

  /** Outside the addon's pump, which submits on its way out. */
  protected submitQueued(): void {
    const ring = this.io.ring;
    if (!this.io.destroyed && ring.pending && !ring.pumping) ring.submit();
  }

  /** Shuts a direction down; the sending side after the send in flight, if any. */
  shutdown(sock: Socket, how: ShutdownCommand): void {
    shutdown(this.io, sock as UringSocket, how);
  }

  /**
   * Closes the socket for the program at once (its waiters throw
   * `SocketClosed`) and cancels its requests, except a send whose write had
   * returned: that one is let through, and the fd closed once it completed.
   */
  closeNow(sock: Socket): void {
    this.io.close(sock as UringSocket);
  }

  /**
   * Describes a listening socket for another domain (see the native
   * backend's `share`). From now on it accepts one connection per waiting
   * `accept` (its multishot accept, if armed, is cancelled).
   */
  override share(sock: Socket): SharedSocket {
    shareAccepts(this.io, sock as UringSocket);
    return super.share(sock);
  }

  /** A listener of this domain over a `dup` of another domain's listening socket; already `closed` when the owner closed it first. */
  override adopt(shared: SharedSocket): Socket {
    const s = super.adopt(shared) as UringSocket;
    s.shared = true; // one accept per waiting `accept`, as for the owner's listener once shared
    return s;
  }

  /**
   * Core's `finaliser`: the domain stops. Closes every socket still open,
   * sends in flight included, submits the cancellations and lets the fds go
   * (requests that have not completed yet hold their sockets in the kernel
   * until they do; their completions are strays then).
   */
  override finaliser(): void {
    super.finaliser();
    this.#stopAll();
  }

  /** Closes what is left, then the ring; settles once the ring's handle is gone from Node's loop. */
  drain(): Promise<void> {
    this.timers.clear();
    this.#stopAll();
    const io = this.io;
    if (io.destroyed) return Promise.resolve();
    io.destroyed = true;
    io.ring.handle.destroy();
    return new Promise((resolve) => afterHandleClose(resolve)); // the ring with it
  }

  #stopAll(): void {
    const io = this.io;
    for (const s of io.fds.live.all()) {
      io.close(s);
      io.abortSend(s);
    }
    if (io.destroyed) return;
    io.ring.submit();
    for (const s of io.fds.live.all()) {
      s.closing = false;
      io.closeFd(s);
      s.wakeClosers();
    }
  }
}
