/**
 * `Semaphore`: a fair counting semaphore.
 */
import { type Instruction, type Operation, self, type Task } from "@bobbin/core";
import { type Body, checkBody, isGenerator } from "./call.js";
import { DONE, DONE_OP, WaitOp, WaitQueue } from "./waiters.js";

/** A task parked in `acquire(n)`: `release` takes its permits off the count before waking it. */
class AcquireWait extends WaitOp<void> {
  constructor(
    private readonly semaphore: Semaphore,
    task: Task<unknown>,
    /** @internal */ readonly permits: number,
  ) {
    super(task);
  }

  protected woken(): IteratorResult<Instruction, void> {
    return DONE;
  }

  protected left(): void {
    const s = this.semaphore;
    const wasHead = s.queue.head === this;
    // Leaving the head may unblock the waiters behind it (a large request
    // was holding them up).
    if (s.queue.remove(this) && wasHead) s.dispatch();
  }
}

/**
 * A counting semaphore: `acquire(n)` takes `n` permits, waiting while fewer
 * are available; `release(n)` gives `n` back.
 *
 * - **Fair**: waiters are served in FIFO order; a large request at the head
 *   is not overtaken by smaller ones behind it (no starvation), and
 *   `tryAcquire` never jumps the queue.
 * - **Not owned**: any task (or plain callback) may release, and a release
 *   may raise the count above the initial one (a semaphore can be a signal).
 * - **Cancellation-aware**: a task cancelled while waiting leaves the queue
 *   without any permit; `withPermits` gives its permits back on every exit.
 * - **Cheap when available**: `acquire()` with permits available does not
 *   suspend, and `acquire()`/`acquire(1)` allocates nothing.
 *
 * @example
 * ```ts
 * const pool = new Semaphore(4);   // at most 4 requests in flight
 * const body = yield* pool.withPermits(1, function* () { return yield* fetchPage(url); });
 * ```
 * @throws RangeError for a permit count that is not an integer ≥ 0; Cancelled from a cancelled `acquire`.
 */
export class Semaphore {
  /** @internal */ readonly queue = new WaitQueue<AcquireWait>();
  private permits: number;
  private readonly acquireOne: Operation<void>;

  /**
   * @param permits the initial number of permits (an integer ≥ 0).
   * @throws RangeError when `permits` is not an integer ≥ 0.
   */
  constructor(permits: number) {
    this.permits = checkCount(permits, "new Semaphore(permits)", 0);
    this.acquireOne = { [Symbol.iterator]: () => this.startAcquire(1) };
  }

  /**
   * Makes a semaphore with `permits` permits.
   * @example
   * ```ts
   * const s = Semaphore.create(2);
   * ```
   * @throws RangeError when `permits` is not an integer ≥ 0.
   */
  static create(permits: number): Semaphore {
    return new Semaphore(permits);
  }

  /** Permits available right now. */
  get available(): number {
    return this.permits;
  }

  /** How many tasks are waiting in `acquire` (cancelled waiters are never counted). */
  get waiters(): number {
    return this.queue.size;
  }

  /**
   * Takes `n` permits (default 1), waiting in FIFO order until they are
   * available. `acquire(0)` returns at once.
   *
   * @example
   * ```ts
   * yield* s.acquire();
   * try { yield* work(); } finally { s.release(); }
   * ```
   * @throws RangeError when `n` is not an integer ≥ 0.
   * @throws Cancelled when the task is cancelled while waiting (it then holds none of the `n` permits).
   * @throws TypeError outside a task.
   */
  acquire(n = 1): Operation<void> {
    if (n === 1) return this.acquireOne;
    checkCount(n, "Semaphore.acquire(n)", 0);
    return { [Symbol.iterator]: () => this.startAcquire(n) };
  }

  /**
   * Gives `n` permits back (default 1) and wakes the waiters they satisfy, in
   * order. Callable from any task and from plain callbacks.
   *
   * @example
   * ```ts
   * s.release(2);
   * ```
   * @throws RangeError when `n` is not an integer ≥ 0.
   */
  release(n = 1): void {
    if (n !== 1) checkCount(n, "Semaphore.release(n)", 0);
    this.permits += n;
    if (this.queue.head !== null) this.dispatch();
  }

  /**
   * Takes `n` permits (default 1) if they are available and nobody is
   * waiting, and says whether it did. Never suspends.
   *
   * @example
   * ```ts
   * if (s.tryAcquire()) { try { work(); } finally { s.release(); } }
   * ```
   * @throws RangeError when `n` is not an integer ≥ 0.
   */
  tryAcquire(n = 1): boolean {
    if (n !== 1) checkCount(n, "Semaphore.tryAcquire(n)", 0);
    if (this.queue.head !== null || this.permits < n) return false;
    this.permits -= n;
    return true;
  }

  /**
   * Runs `fn(...args)` holding `n` permits and always gives them back: on
   * return, on throw and on cancellation. `fn` may be a generator function
   * or a plain function.
   *
   * @example
   * ```ts
   * const page = yield* s.withPermits(1, fetchPage, url);
   * ```
   * @throws whatever `fn` throws.
   * @throws RangeError, Cancelled, TypeError: as `acquire`.
   */
  withPermits<A extends unknown[], T>(n: number, fn: (...args: A) => Generator<Instruction, T, unknown>, ...args: A): Operation<T>;
  withPermits<A extends unknown[], T>(n: number, fn: (...args: A) => T, ...args: A): Operation<T>;
  withPermits<A extends unknown[], T>(n: number, fn: Body<A, T>, ...args: A): Operation<T> {
    checkCount(n, "Semaphore.withPermits(n, fn)", 0);
    checkBody(fn, "Semaphore.withPermits");
    return withPermitsBody(this, n, fn, args);
  }

  // -- internals ------------------------------------------------------------

  private startAcquire(n: number): Iterator<Instruction, void, unknown> {
    const task = self();
    if (this.queue.head === null && this.permits >= n) {
      this.permits -= n;
      return DONE_OP;
    }
    const w = new AcquireWait(this, task, n);
    this.queue.push(w);
    return w;
  }

  /** @internal Serves waiters from the head while the permits suffice. */
  dispatch(): void {
    for (let w = this.queue.head; w !== null && this.permits >= w.permits; w = this.queue.head) {
      this.queue.shift();
      this.permits -= w.permits;
      // false: that waiter was cancelled and detached before it left the queue
      // itself; it will not use the permits, so they go to the next one.
      if (!w.trigger.signal()) this.permits += w.permits;
    }
  }
}

function* withPermitsBody<A extends unknown[], T>(s: Semaphore, n: number, fn: Body<A, T>, args: A): Generator<Instruction, T, unknown> {
  yield* s.acquire(n);
  try {
    const r = args.length === 0 ? (fn as () => unknown)() : fn(...args);
    return (isGenerator(r) ? yield* r : r) as T;
  } finally {
    s.release(n);
  }
}

function checkCount(n: number, name: string, min: number): number {
  if (!Number.isSafeInteger(n) || n < min) throw new RangeError(`${name} expects an integer ≥ ${min}, got ${String(n)}`);
  return n;
}
