/**
 * The native backend for `@bobbin/unix`: sockets are raw non-blocking fds in
 * the poller's epoll/kqueue set, registered once, edge-triggered, for both
 * directions (`socket.ts` keeps their readiness, `io.ts` the set). An
 * operation tries its system call in the task's fiber first and parks only
 * on `EAGAIN` (`ops.ts`); the poller's batch marks sockets ready and wakes
 * the first waiter of each direction (`readiness.ts`). This file holds the
 * contract's entry points.
 */
import type * as B from "@bobbin/core";
import type * as L from "@bobbin/core/lowlevel";
import type { Chunk, ShutdownCommand, Socket, SocketKind } from "@bobbin/unix";
import { afterHandleClose, type BufferOp, ParkedCount } from "@bobbin/unix/backend";
import { ArenaPool } from "../arena.js";
import { loadAddon } from "../load.js";
import { Poller } from "../poller.js";
import type { PollerStats } from "../poller-stats.js";
import { RawBackend } from "../raw/backend.js";
import { EpollIo } from "./io.js";
import { AcceptOp, CloseOp, ReadOp, RecvOp, WriteOp } from "./ops.js";
import type { NativeBackend, NativeBackendOptions } from "./options.js";
import { onEvent, onSend } from "./readiness.js";
import { readChunkOp } from "./slot-read.js";
import { NativeSocket } from "./socket.js";
import { closeNow, shutdown, stageNow } from "./stream.js";

/**
 * Bytes the poller may read ahead per batch, for the readers parked on the
 * ready sockets (a batch of 64-byte echoes for 50 connections takes 3.2 KiB;
 * a batch that fills it leaves the rest of its readers to read for themselves).
 */
const READ_AHEAD_BYTES = 256 * 1024;
/** Bytes of the queued sends of one slice. */
const STAGING_BYTES = 256 * 1024;

/**
 * The poller, its set and what the backend keeps of it.
 * @throws NativeUnavailable when the addon is not built; RangeError for a bad `batchSize`.
 */
function epollIo(options: NativeBackendOptions, failed: (error: Error) => void): EpollIo {
  const native = loadAddon();
  const size = options.batchSize ?? 1024;
  if (!Number.isInteger(size) || size < 1 || size > 1_000_000) {
    throw new RangeError(`nativeBackend({ batchSize }): an integer in 1 … 1000000, got ${String(size)}`);
  }
  let io: EpollIo | null = null;
  // Unreferenced: Node's loop is held only while operations are parked (ParkedCount).
  const poller = new Poller((fd, events, _token, read, at) => onEvent(io!, fd, events, read, at), {
    batchSize: size,
    ref: false,
    readAhead: READ_AHEAD_BYTES,
    sendStaging: STAGING_BYTES,
    onSend: (fd, result, unsent) => onSend(io!, fd, result, unsent),
    onError: failed,
  });
  const pool = options.pool instanceof ArenaPool ? options.pool : new ArenaPool(options.pool ?? {});
  const sockopts = native.sockopts;
  io = new EpollIo(poller, native.syscalls, sockopts.SOL_SOCKET!, sockopts.SO_REUSEADDR!, new ParkedCount(poller), pool);
  return io;
}

/**
 * @internal The `@bobbin/unix` backend on the native poller. Made by
 * `nativeBackend`.
 * @throws NativeUnavailable (from the constructor) when the addon is not built.
 * @throws RangeError (from the constructor) for a bad `batchSize`.
 */
export class EpollBackend extends RawBackend<NativeSocket, EpollIo> implements NativeBackend {
  readonly name = "native";

  constructor(options: NativeBackendOptions = {}) {
    super((failed) => epollIo(options, failed), { Write: WriteOp, Accept: AcceptOp, Recv: RecvOp, Close: CloseOp }, options.eagerPoll);
  }

  /** The arena pool behind `readSlot`. */
  get pool(): ArenaPool {
    return this.io.pool;
  }

  /** Counters for tuning, the poller's: batches delivered by Node's loop, drains done by `select`, and the events each brought. */
  get stats(): PollerStats {
    return this.io.poller.stats;
  }

  // -- events -------------------------------------------------------------------

  /**
   * Core's `pending`: operations parked on sockets, whose readiness `select`
   * drains from the poller, or queued sends, which `select` submits.
   */
  pending(): boolean {
    const io = this.io;
    return (io.parked.count !== 0 || io.poller.staged !== 0) && !io.destroyed;
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
  override select(block: boolean, cancelled: readonly L.Uid[]): L.Signal[] | Promise<L.Signal[]> {
    this.failure.check();
    const io = this.io;
    if (!io.destroyed) {
      // The drain submits the slice's queued sends first, in the same call.
      if (this.pollsFirst(block)) {
        // Tasks were woken: nothing to wait for.
        if (io.poller.poll(0) > 0) return super.select(false, cancelled);
      } else {
        io.poller.flush();
      }
    }
    return super.select(block, cancelled);
  }

  // -- the Backend contract ------------------------------------------------------

  protected make(kind: SocketKind): NativeSocket {
    return new NativeSocket(kind, this, this.io.parked);
  }

  protected newRead(s: NativeSocket): BufferOp<number> {
    return new ReadOp(this.io, s, "read");
  }

  /** Slots of the arena pool, taken once the socket is readable and lent. */
  readChunk(sock: Socket): B.Operation<Chunk | null> {
    return readChunkOp(this.io, sock as NativeSocket);
  }

  /** A write staged for the next call into the addon, when nothing of the socket's is left unsent and its buffer had room. */
  protected sendNow(s: NativeSocket, buf: Uint8Array, off: number, len: number): boolean {
    return stageNow(this.io, s, buf, off, len);
  }

  protected submitQueued(): void {
    if (!this.io.destroyed) this.io.poller.flush();
  }

  shutdown(sock: Socket, how: ShutdownCommand): void {
    shutdown(this.io, sock as NativeSocket, how);
  }

  closeNow(sock: Socket): void {
    closeNow(this.io, sock as NativeSocket);
  }

  /**
   * Core's `finaliser`: the domain stops. Also closes the sockets still open
   * (a worker domain has no `drain`); the set itself goes with the thread.
   */
  override finaliser(): void {
    super.finaliser();
    for (const s of this.io.fds.live.all()) closeNow(this.io, s);
  }

  drain(): Promise<void> {
    this.timers.clear();
    const io = this.io;
    for (const s of io.fds.live.all()) closeNow(io, s); // close(2) at once: nothing to wait for
    if (io.destroyed) return Promise.resolve();
    io.destroyed = true;
    io.poller.destroy();
    return new Promise((resolve) => afterHandleClose(resolve)); // the set's fd with it
  }
}
