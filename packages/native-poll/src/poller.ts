/**
 * The poller, for backend authors: one private epoll set (kqueue on BSD and
 * macOS) watched by Node's loop through a single `uv_poll_t`. Ready events are
 * drained in batches into a typed array (no object per event) and JavaScript
 * is called once per batch; the wrapper then calls your handler once per live
 * event.
 */
import { describe } from "@bobbin/core/lowlevel";
import { errnoException } from "./errno.js";
import { loadAddon, type NativePollerHandle } from "./load.js";
import type { PollerStats } from "./poller-stats.js";

/**
 * Interest and event bits. A handler receives `events` as a bit set of
 * `READABLE`, `WRITABLE`, `HANGUP` (the peer closed, or the fd hung up) and
 * `ERROR` (a pending socket error); `HANGUP` and `ERROR` arrive whatever the
 * interest.
 *
 * @example
 * ```ts
 * poller.add(fd, PollEvent.READABLE | PollEvent.WRITABLE);
 * // in the handler:
 * if (events & (PollEvent.READABLE | PollEvent.HANGUP | PollEvent.ERROR)) tryRead(fd);
 * ```
 * @throws never (constants).
 */
export const PollEvent = {
  READABLE: 1,
  WRITABLE: 2,
  HANGUP: 4,
  ERROR: 8,
} as const;

/**
 * How an fd reports readiness:
 * - `"edge"` (EPOLLET / EV_CLEAR): one event per change to ready; read or
 *   write until `EAGAIN`, then wait for the next event.
 * - `"level"`: an event on every drain while the fd is ready.
 * - `"oneshot"` (EPOLLONESHOT / EV_DISPATCH, level-triggered): one event,
 *   then nothing until `rearm(fd)`; re-arming an fd that is still ready
 *   reports it again, so no readiness is lost between the event and the rearm.
 *
 * @example
 * ```ts
 * const mode: PollMode = "oneshot";
 * poller.add(fd, PollEvent.READABLE, mode);
 * ```
 * @throws never (a type).
 */
export type PollMode = "edge" | "level" | "oneshot";

/**
 * Called once per live event of a batch. `token` is the generation of the
 * registration (what {@link Poller.add} returned). Events for an fd that was
 * removed or closed earlier in the same batch (or registered again since) are
 * not delivered.
 *
 * With read-ahead (the `readAhead` option), `read` says what the poller read
 * from the fd while it drained the batch, for an fd given a size with
 * {@link Poller.want}: the bytes read (0: the end of the stream), now in
 * {@link Poller.readArea} from offset `at`; a negative errno; or
 * {@link Poller.NOT_READ} when it read nothing. The bytes stay there only
 * while the handler runs (the next batch reuses the area).
 *
 * @example
 * ```ts
 * const handler: PollHandler = (fd, events, token) => { if (events & PollEvent.READABLE) wake(fd, token); };
 * const withReadAhead: PollHandler = (fd, events, token, read, at) => {
 *   if (read > 0) chunks.push(poller.readArea.slice(at, at + read));
 * };
 * ```
 * @throws never (a type; what the handler throws is rethrown after the batch).
 */
export type PollHandler = (fd: number, events: number, token: number, read: number, at: number) => void;

/**
 * Options of {@link Poller}.
 *
 * @example
 * ```ts
 * const poller = new Poller(handler, { batchSize: 256, ref: false, onInterrupt: () => drainQueue() });
 * // read-ahead and queued sends, as the native backend uses them:
 * const batched = new Poller(handler, {
 *   readAhead: 256 * 1024,
 *   sendStaging: 256 * 1024,
 *   onSend: (fd, result, unsent) => keepForLater(fd, unsent.slice()),
 *   onError: (error) => failEverything(error),   // a failed epoll_wait, uv_poll, or detached memory
 * });
 * ```
 * @throws never (a type; the constructor validates it).
 */
export interface PollerOptions {
  /** Events per batch (the size of the typed array). Default 1024. */
  readonly batchSize?: number;
  /** Called when a batch carried an `interrupt()`. */
  readonly onInterrupt?: () => void;
  /** Whether the poller keeps Node's process alive (like a server). Default `true`; see {@link Poller.unref}. */
  readonly ref?: boolean;
  /**
   * Bytes of the read-ahead area (0: no read-ahead, the default). With it, a
   * batch also reads each ready fd given a size with {@link Poller.want}, in
   * the same call into the addon (see {@link PollHandler}).
   */
  readonly readAhead?: number;
  /**
   * Bytes of the staging area for queued sends (0: none, the default). With
   * it, {@link Poller.stage} queues a send, and the next call into the addon
   * (a batch, {@link Poller.poll}, {@link Poller.flush}) submits every queued
   * send first, in order.
   */
  readonly sendStaging?: number;
  /**
   * Called, when queued sends were submitted, for each one that did not send
   * all its bytes: `result` is the bytes sent, a negative errno, or
   * {@link Poller.NOT_SENT} (an earlier send to the same fd in that submission
   * was short or failed, so this one was not tried); `unsent` is what is left,
   * valid during the call only. It must not stage or flush.
   */
  readonly onSend?: (fd: number, result: number, unsent: Uint8Array) => void;
  /**
   * Called when a batch from Node's loop failed: `epoll_wait`/`kevent`
   * failed, libuv could not poll the set (the error names `uv_poll`), or the
   * memory the poller shares with JavaScript was detached (`code`
   * `ERR_BOBBIN_DETACHED`). Without it, the error is thrown from Node's
   * callback (an uncaught exception). The poller is of no use afterwards:
   * destroy it.
   */
  readonly onError?: (error: Error) => void;
}

const MODES: Record<PollMode, number> = { edge: 0, level: 1, oneshot: 2 };
/** The addon's kNotRead (read_ahead.h): a handler's `read` when nothing was read; also its kNotSent (send_queue.h). */
const NOT_READ = -0x80000000;
/** Int32s per queued send (the addon's kSendInts). */
const SEND_INTS = 4;

/** A byte count option: an integer in 0 … 2^30, 0 when absent. */
function byteCount(value: number | undefined, name: string): number {
  const n = value ?? 0;
  if (!Number.isInteger(n) || n < 0 || n > 2 ** 30) {
    throw new RangeError(`new Poller(handler, { ${name} }): ${name} must be an integer in 0 … 2^30 bytes, got ${describe(n)}`);
  }
  return n;
}

/**
 * An epoll/kqueue set in Node's loop. Registrations carry a generation token;
 * all methods act on this thread's loop (only `interrupt()` is meant to be
 * callable at any time, from any callback).
 *
 * @example
 * ```ts
 * import { Poller, PollEvent, syscalls } from "@bobbin/native-poll";
 * const [r, w] = syscalls.pipe() as [number, number];
 * const poller = new Poller((fd, events) => {
 *   if (events & PollEvent.READABLE) console.log("fd", fd, "is readable");
 *   poller.close(r);
 *   poller.destroy();
 * });
 * poller.add(r, PollEvent.READABLE, "edge");
 * syscalls.write(w, Buffer.from("x"));
 * ```
 * @throws NativeUnavailable (from the constructor) when the addon is not built.
 */
export class Poller implements Disposable {
  /**
   * What a handler's `read` is when the poller read nothing from the fd (the addon's `NOT_READ`, INT32_MIN).
   *
   * @example
   * ```ts
   * const handler: PollHandler = (fd, events, token, read, at) => { if (read !== Poller.NOT_READ) take(fd, read, at); };
   * ```
   * @throws never (a constant).
   */
  static readonly NOT_READ: number = NOT_READ;
  /**
   * What `onSend`'s `result` is for a queued send that was not tried (the addon's `NOT_SENT`, INT32_MIN).
   *
   * @example
   * ```ts
   * const onSend = (fd: number, result: number, unsent: Uint8Array) => { if (result === Poller.NOT_SENT) retryLater(fd, unsent.slice()); };
   * ```
   * @throws never (a constant).
   */
  static readonly NOT_SENT: number = NOT_READ;
  /**
   * Where a batch's read-ahead lands (empty without the `readAhead` option);
   * a handler copies its bytes out before it returns.
   *
   * @example
   * ```ts
   * if (read > 0) target.set(poller.readArea.subarray(at, at + read));
   * ```
   * @throws never (a property).
   */
  readonly readArea: Uint8Array;
  private readonly counts = { batches: 0, batchEvents: 0, polls: 0, pollEvents: 0, readsAhead: 0, sends: 0 };
  private readonly native: NativePollerHandle;
  /** The batch, the addon's memory (as are `readArea`, `wants`, `staging` and `sendQueue` when in use). */
  private readonly batch: Int32Array;
  /** The live generation of each fd (0: not registered), for filtering within a batch. */
  private gens: Int32Array = new Int32Array(256);
  /** Bytes the poller reads ahead per fd (0: none); the addon's with read-ahead, as long as `gens`. */
  private wants: Int32Array;
  private readonly stride: number;
  /** Queued sends: [count, then (fd, offset, length, result) per send]. */
  private readonly sendQueue: Int32Array;
  private readonly staging: Uint8Array;
  private stagingUsed = 0;
  private readonly onSend: ((fd: number, result: number, unsent: Uint8Array) => void) | undefined;
  private readonly onInterrupt: (() => void) | undefined;
  private readonly onError: ((error: Error) => void) | undefined;
  private destroyed = false;
  /** The byte lengths of the shared views when made: a view now shorter was detached. */
  private readonly views: number[];
  /** A batch is being handed to the handler (its array must not be refilled). */
  private dispatching = false;

  /**
   * @throws RangeError when `batchSize` is not an integer in 1 … 1,000,000, or `readAhead` or `sendStaging` not one in 0 … 2^30.
   * @throws TypeError when `handler` is not a function.
   * @throws NativeUnavailable when the addon is not built.
   * @throws Error (Node-style, e.g. `EMFILE`) when the set cannot be created.
   */
  constructor(
    private readonly handler: PollHandler,
    options: PollerOptions = {},
  ) {
    if (typeof handler !== "function") throw new TypeError("new Poller(handler): handler must be a function (fd, events, token) => void");
    const size = options.batchSize ?? 1024;
    if (!Number.isInteger(size) || size < 1 || size > 1_000_000) {
      throw new RangeError(`new Poller(handler, { batchSize }): batchSize must be an integer in 1 … 1000000, got ${describe(size)}`);
    }
    const ahead = byteCount(options.readAhead, "readAhead");
    const staging = byteCount(options.sendStaging, "sendStaging");
    this.onInterrupt = options.onInterrupt;
    this.onError = options.onError;
    const native = loadAddon();
    this.stride = native.constants.EVENT_INTS;
    this.onSend = options.onSend;
    // The memories the addon keeps pointers into are made by the addon (a
    // transferred ArrayBuffer takes the view from us, never the memory from it).
    this.native = new native.NativePoller(size, (count, woken, failed) => {
      if (failed !== undefined || !this.attached()) return this.batchFailed(count, failed);
      this.settleSends();
      this.counts.batches++;
      this.counts.batchEvents += count;
      this.dispatch(count, woken);
    });
    this.batch = new Int32Array(this.native.batch);
    this.readArea = ahead > 0 ? new Uint8Array(this.native.readAhead(ahead)) : new Uint8Array(0);
    this.wants = ahead > 0 ? new Int32Array(this.native.wants(this.gens.length)) : new Int32Array(this.gens.length);
    if (staging > 0) {
      const [bytes, queue] = this.native.sendQueue(staging, size);
      this.staging = new Uint8Array(bytes);
      this.sendQueue = new Int32Array(queue);
    } else {
      this.staging = new Uint8Array(0);
      this.sendQueue = new Int32Array(1);
    }
    this.views = [this.batch, this.readArea, this.wants, this.staging, this.sendQueue].map((v) => v.byteLength);
    if (options.ref === false) this.native.unref();
  }

  /** Whether every view of the addon's memory is still attached here. */
  private attached(): boolean {
    const v = this.views;
    return (
      this.batch.byteLength === v[0] &&
      this.readArea.byteLength === v[1] &&
      this.wants.byteLength === v[2] &&
      this.staging.byteLength === v[3] &&
      this.sendQueue.byteLength === v[4]
    );
  }

  /** The error for a poller whose shared memory was detached (an ArrayBuffer transferred). */
  private detached(what: string): Error {
    return Object.assign(
      new Error(
        `poller.${what}: the memory the poller shares with the addon was detached (one of its ArrayBuffers was transferred); destroy the poller`,
      ),
      { code: "ERR_BOBBIN_DETACHED" },
    );
  }

  /** A batch from Node's loop failed: its error goes to `onError`, or is thrown. */
  private batchFailed(rc: number, failed: string | undefined): void {
    const error =
      failed === undefined || failed === "detached" ? this.detached("batch") : errnoException(rc, failed, "(draining the poller's set)");
    if (this.onError === undefined) throw error;
    this.onError(error);
  }

  /**
   * What the poller has delivered so far (see {@link PollerStats}), kept up to date: for tuning and tests.
   *
   * @example
   * ```ts
   * console.log(`${poller.stats.readsAhead} reads ahead, ${poller.stats.sends} queued sends`);
   * ```
   * @throws never.
   */
  get stats(): PollerStats {
    return this.counts;
  }

  /** The epoll/kqueue fd (-1 once destroyed). */
  get fd(): number {
    return this.native.fd;
  }

  /** How many fds are registered. */
  get registered(): number {
    return this.native.registered;
  }

  /**
   * Registers `fd` for `interest` (`PollEvent.READABLE`, `WRITABLE` or both)
   * in `mode`. Returns its generation token (> 0), which every event for this
   * registration carries.
   *
   * @example
   * ```ts
   * const token = poller.add(fd, PollEvent.READABLE, "oneshot");
   * ```
   * @throws Error with `code` `EEXIST` when `fd` is already registered, `EPERM`
   * for a regular file, `EBADF` for a closed fd (Node-style, from epoll_ctl/kevent).
   * @throws RangeError for an empty or unknown interest, or an unknown mode.
   */
  add(fd: number, interest: number, mode: PollMode = "edge"): number {
    const m = MODES[mode];
    if (m === undefined)
      throw new RangeError(`poller.add(fd, interest, mode): mode must be "edge", "level" or "oneshot", got ${describe(mode)}`);
    const gen = this.live("add").add(fd, interest, m);
    if (gen < 0) throw errnoException(gen, "epoll_ctl", `(add fd ${fd})`);
    if (fd >= this.gens.length) this.grow(fd);
    this.gens[fd] = gen;
    this.wants[fd] = 0;
    return gen;
  }

  /**
   * With read-ahead: how many bytes the next batch reporting `fd` readable
   * reads from it (0: none; the handler then reads for itself). Set it while
   * a reader waits on the fd, clear it when none does: the poller reads for
   * whoever is waiting, and bytes it read go to the handler only.
   *
   * @example
   * ```ts
   * poller.want(fd, reader.length);   // a reader parks
   * poller.want(fd, 0);               // it left
   * ```
   * @throws RangeError without the `readAhead` option, or for an fd that is not registered.
   */
  want(fd: number, bytes: number): void {
    if (this.readArea.length === 0) throw new RangeError("poller.want(fd, bytes): this poller has no read-ahead (the readAhead option)");
    if (this.token(fd) === 0) throw new RangeError(`poller.want(fd, bytes): fd ${fd} is not registered`);
    this.wants[fd] = bytes;
  }

  /**
   * Changes the interest of a registered fd (and arms it again if it was disarmed).
   *
   * @example
   * ```ts
   * poller.modify(fd, PollEvent.READABLE | PollEvent.WRITABLE);
   * ```
   * @throws Error with `code` `ENOENT` when `fd` is not registered.
   * @throws RangeError for an empty or unknown interest.
   */
  modify(fd: number, interest: number): void {
    const rc = this.live("modify").modify(fd, interest);
    if (rc < 0) throw errnoException(rc, "epoll_ctl", `(modify fd ${fd})`);
  }

  /**
   * Arms again an fd disarmed by {@link disarm} or by a one-shot event. For an
   * armed edge- or level-triggered fd it does nothing.
   *
   * @example
   * ```ts
   * // one-shot: handle the event, then
   * poller.rearm(fd);
   * ```
   * @throws Error with `code` `ENOENT` when `fd` is not registered.
   */
  rearm(fd: number): void {
    const rc = this.live("rearm").rearm(fd);
    if (rc < 0) throw errnoException(rc, "epoll_ctl", `(rearm fd ${fd})`);
  }

  /**
   * Stops events for `fd` until {@link rearm} or {@link modify}; it stays
   * registered (events already queued for it are dropped).
   *
   * @example
   * ```ts
   * poller.disarm(fd);
   * ```
   * @throws Error with `code` `ENOENT` when `fd` is not registered.
   */
  disarm(fd: number): void {
    const rc = this.live("disarm").disarm(fd);
    if (rc < 0) throw errnoException(rc, "epoll_ctl", `(disarm fd ${fd})`);
  }

  /**
   * Unregisters `fd` without closing it. Its remaining events, even in the
   * batch being handled, are dropped.
   *
   * @example
   * ```ts
   * poller.remove(fd);
   * ```
   * @throws Error with `code` `ENOENT` when `fd` is not registered.
   */
  remove(fd: number): void {
    const rc = this.live("remove").remove(fd);
    this.forget(fd);
    if (rc < 0) throw errnoException(rc, "epoll_ctl", `(remove fd ${fd})`);
  }

  /**
   * Unregisters `fd` if it is registered, then closes it. (Closing an fd is not
   * enough to silence epoll when the file is still open through a `dup`.)
   *
   * @example
   * ```ts
   * poller.close(fd);
   * ```
   * @throws Error (Node-style) when `close` fails, e.g. `EBADF`.
   */
  close(fd: number): void {
    const rc = this.live("close").close(fd);
    this.forget(fd);
    if (rc < 0) throw errnoException(rc, "close");
  }

  /**
   * The generation token of `fd`'s registration, 0 when it is not registered.
   *
   * @example
   * ```ts
   * if (poller.token(fd) === 0) poller.add(fd, PollEvent.READABLE);
   * ```
   * @throws never.
   */
  token(fd: number): number {
    return fd >= 0 && fd < this.gens.length ? this.gens[fd]! : 0;
  }

  /**
   * Makes the set readable (eventfd on Linux), so that a batch is delivered
   * soon with the interrupt flag (`onInterrupt`), even if no fd is ready.
   *
   * @example
   * ```ts
   * const poller = new Poller(handler, { onInterrupt: () => console.log("woken") });
   * poller.interrupt();
   * ```
   * @throws Error when the poller is destroyed.
   */
  interrupt(): void {
    const rc = this.live("interrupt").interrupt();
    if (rc < 0) throw errnoException(rc, "write");
  }

  /**
   * Drains ready events now, without going through Node's loop, waiting up to
   * `timeoutMs` (0: not at all; this blocks the thread), and delivers them to
   * the handler. Returns how many events were drained.
   *
   * @example
   * ```ts
   * poller.poll();   // whatever is ready right now
   * ```
   * @throws Error (Node-style) when epoll_wait/kevent fails.
   * @throws Error with `code` `ERR_BOBBIN_DETACHED` when memory the poller shares with the addon was detached.
   * @throws RangeError when `timeoutMs` is not an integer ≥ -1.
   */
  poll(timeoutMs = 0): number {
    if (!Number.isInteger(timeoutMs) || timeoutMs < -1)
      throw new RangeError(`poller.poll(timeoutMs): an integer ≥ -1, got ${describe(timeoutMs)}`);
    if (this.dispatching) {
      throw new Error(
        "poller.poll() was called from inside the poller's handler: the batch being handled would be overwritten; poll after the handler returns",
      );
    }
    const native = this.live("poll");
    if (!this.attached()) throw this.detached("poll()");
    const n = native.poll(timeoutMs);
    this.settleSends();
    if (n < 0) throw errnoException(n, "epoll_wait");
    this.counts.polls++;
    this.counts.pollEvents += n;
    this.dispatch(n, false);
    return n;
  }

  /**
   * With a staging area (the `sendStaging` option): queues a send of
   * `src[off, off + len)` to `fd`, copying the bytes; the next call into the
   * addon submits it. Returns false, queuing nothing, when the staging area
   * or the queue has no room (flush, or send directly). What a submitted
   * send did not send is reported to `onSend`.
   *
   * @example
   * ```ts
   * if (!poller.stage(fd, bytes, 0, bytes.length)) { poller.flush(); poller.stage(fd, bytes, 0, bytes.length); }
   * ```
   * @throws RangeError when `len` is not positive or the range is not inside `src`.
   */
  stage(fd: number, src: Uint8Array, off: number, len: number): boolean {
    if (!(len > 0 && off >= 0 && off + len <= src.length)) {
      throw new RangeError(`poller.stage(fd, src, off, len): ${off} + ${len} is not a non-empty range of ${src.length} bytes`);
    }
    const q = this.sendQueue;
    const count = q[0]!;
    const at = this.stagingUsed;
    if (at + len > this.staging.length || 1 + (count + 1) * SEND_INTS > q.length) return false;
    this.staging.set(len === src.length ? src : src.subarray(off, off + len), at);
    const e = 1 + count * SEND_INTS;
    q[e] = fd;
    q[e + 1] = at;
    q[e + 2] = len;
    q[0] = count + 1;
    this.stagingUsed = at + len;
    return true;
  }

  /**
   * How many sends are queued and not submitted yet (see {@link Poller.stage}).
   *
   * @example
   * ```ts
   * if (poller.staged !== 0) poller.flush();
   * ```
   * @throws never.
   */
  get staged(): number {
    return this.sendQueue[0]!;
  }

  /**
   * Submits the queued sends now (one call into the addon), without draining
   * events.
   *
   * @example
   * ```ts
   * poller.flush();
   * ```
   * @throws Error when the poller is destroyed, or with `code` `ERR_BOBBIN_DETACHED` when memory it shares with the addon was detached.
   */
  flush(): void {
    if (this.sendQueue[0] === 0) return;
    const native = this.live("flush");
    if (!this.attached()) throw this.detached("flush()");
    native.flush();
    this.settleSends();
  }

  /**
   * Lets Node exit while the poller is idle (like `server.unref()`).
   *
   * @example
   * ```ts
   * poller.unref();
   * ```
   * @throws never.
   */
  unref(): void {
    this.native.unref();
  }

  /**
   * Keeps Node alive while the poller exists (the default).
   *
   * @example
   * ```ts
   * poller.ref();
   * ```
   * @throws never.
   */
  ref(): void {
    this.native.ref();
  }

  /**
   * Stops watching and closes the set. Registered fds are not closed: that is
   * their owner's business. Destroying twice does nothing.
   *
   * @example
   * ```ts
   * poller.destroy();
   * ```
   * @throws never.
   */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.native.destroy();
    this.gens.fill(0);
  }

  /**
   * `using poller = new Poller(…)` destroys it at the end of the block.
   *
   * @example
   * ```ts
   * { using p = new Poller(handler); p.add(fd, PollEvent.READABLE); }
   * ```
   * @throws never.
   */
  [Symbol.dispose](): void {
    this.destroy();
  }

  private live(op: string): NativePollerHandle {
    if (this.destroyed) {
      const error = new Error(`poller.${op}(): the poller is destroyed`) as NodeJS.ErrnoException;
      error.code = "ERR_BOBBIN_POLLER_DESTROYED";
      throw error;
    }
    return this.native;
  }

  /** The tables indexed by fd grow to hold `fd`; the addon gets the new `wants`. */
  private grow(fd: number): void {
    let n = this.gens.length * 2;
    while (n <= fd) n *= 2;
    const gens = new Int32Array(n);
    gens.set(this.gens);
    this.gens = gens;
    const wants = this.readArea.length !== 0 ? new Int32Array(this.native.wants(n)) : new Int32Array(n);
    wants.set(this.wants);
    this.wants = wants;
    this.views[2] = wants.byteLength;
  }

  /** `fd` is no longer registered: its events are dropped (the addon reads only for live registrations, and `add` clears `wants`). */
  private forget(fd: number): void {
    if (fd >= 0 && fd < this.gens.length) this.gens[fd] = 0;
  }

  /** The queued sends were submitted: reports those that did not send everything, and empties the queue. */
  private settleSends(): void {
    const q = this.sendQueue;
    const count = q[0]!;
    if (count === 0) return;
    this.counts.sends += count;
    const onSend = this.onSend;
    for (let e = 1; e < 1 + count * SEND_INTS; e += SEND_INTS) {
      const len = q[e + 2]!;
      const result = q[e + 3]!;
      if (result === len || onSend === undefined) continue;
      const off = q[e + 1]!;
      onSend(q[e]!, result, this.staging.subarray(off + Math.max(result, 0), off + len));
    }
    q[0] = 0;
    this.stagingUsed = 0;
  }

  private dispatch(count: number, woken: boolean): void {
    const batch = this.batch;
    const handler = this.handler;
    const stride = this.stride;
    let failed = false;
    let failure: unknown;
    this.dispatching = true;
    for (let i = 0, j = 0; i < count; i++, j += stride) {
      const fd = batch[j]!;
      const gen = batch[j + 1]!;
      // Re-read this.gens: a handler may have grown it.
      if (this.gens[fd] !== gen) continue; // removed, closed or re-registered during this batch
      const read = batch[j + 3]!;
      if (read !== NOT_READ) this.counts.readsAhead++;
      try {
        handler(fd, batch[j + 2]!, gen, read, batch[j + 4]!);
      } catch (error) {
        // Deliver the rest of the batch (edge-triggered events are not
        // repeated), then report the first failure.
        if (!failed) {
          failed = true;
          failure = error;
        }
      }
    }
    this.dispatching = false;
    if (woken) this.onInterrupt?.();
    if (failed) throw failure;
  }
}
