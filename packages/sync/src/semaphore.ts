/**
 * `Semaphore`: a fair counting semaphore, local to its domain
 * (`new Semaphore(n)`) or shared between domains (`Semaphore.shared(n)`).
 *
 * The local side is here; the protocol across domains is `shared/semaphore.ts`.
 */
import { type Instruction, type Operation, self, type Task } from "@bobbin/core";
import { describe, done } from "@bobbin/core/lowlevel";
import { type Body, checkBody, isGenerator } from "./call.js";
import { createShared, type Sharing, sharePortable } from "./shared/portable.js";
import { checkShared, PERMITS, SEMAPHORE, SharedPermits } from "./shared/semaphore.js";
import { DONE, nextSerial, WaitOp, WaitQueue } from "./waiters.js";

/** A task parked in `acquire(n)`: `release` takes its permits off the count before waking it. */
class AcquireWait extends WaitOp<void> {
  constructor(
    private readonly semaphore: Semaphore,
    task: Task<unknown>,
    /** @internal */ readonly permits: number,
  ) {
    super(task);
  }

  protected resume(): IteratorResult<Instruction, void> {
    return DONE;
  }

  /** "acquire 2 of Semaphore#5 (1 free)" (a dump). */
  override describe(): string {
    return `acquire ${this.permits} of ${this.semaphore} (${this.semaphore.available} free)`;
  }

  protected leave(): void {
    const s = this.semaphore;
    const wasHead = s.queue.head === this;
    // Leaving the head may unblock the waiters behind it (a large request
    // was holding them up).
    if (!s.queue.remove(this) || !wasHead) return;
    if (s.sharedPermits === null) s.dispatch();
    else s.headLeft();
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
 * - {@link Semaphore.shared} makes one whose permits are shared between
 *   domains.
 *
 * @example
 * ```ts
 * const pool = new Semaphore(4);   // at most 4 requests in flight
 * const body = yield* pool.withPermits(1, function* () { return yield* fetchPage(url); });
 * ```
 * @throws RangeError for a permit count that is not an integer ≥ 0; Cancelled from a cancelled `acquire`.
 */
export class Semaphore {
  /** @internal Waiters of this domain. */ readonly queue = new WaitQueue<AcquireWait>();
  /** @internal The permits shared with other domains, for `Semaphore.shared(n)`. */ sharedPermits: SharedPermits | null = null;
  private permits: number;
  private readonly acquireOne: Operation<void>;
  private readonly serial = nextSerial();

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

  /**
   * Makes a semaphore with `permits` permits shared between domains: passed
   * to `B.call`/`B.parallel` (as an argument, or inside plain arrays and
   * objects), it arrives in the parallel task as a `Semaphore` over the same
   * permits. Waiting parks the task (`Atomics.waitAsync`) without blocking
   * its domain. Counts are limited to 2³¹ − 1 (the permits live in an
   * `Int32Array`). FIFO within a domain; the domains waiting are served in
   * the order they started waiting, and a large request is not overtaken.
   *
   * @example
   * ```ts
   * const gate = Semaphore.shared(2);   // at most 2 parallel tasks in the critical part, over all domains
   * yield* B.parallel(crawl, urls.map((url) => ({ url, gate })));
   * // in crawl: yield* gate.withPermits(1, fetchPage, url);
   * ```
   * @throws RangeError when `permits` is not an integer in 0..2³¹ − 1.
   */
  static shared(permits: number): Semaphore {
    checkShared(checkCount(permits, "Semaphore.shared(permits)", 0), "Semaphore.shared(permits)");
    return createShared(sharing, (cells) => {
      cells[PERMITS] = permits;
    });
  }

  /** Whether this semaphore's permits are shared between domains (made by {@link Semaphore.shared}). */
  get isShared(): boolean {
    return this.sharedPermits !== null;
  }

  /** `Semaphore#n`, as diagnostics name it. */
  toString(): string {
    return `Semaphore#${this.serial}`;
  }

  /** Permits available right now (over every domain, for a shared semaphore). */
  get available(): number {
    return this.sharedPermits === null ? this.permits : this.sharedPermits.available;
  }

  /** How many tasks are waiting in `acquire` (of this domain, for a shared semaphore; cancelled waiters are never counted). */
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
   * @throws RangeError when `n` is not an integer ≥ 0 (≤ 2³¹ − 2 for a shared semaphore).
   * @throws Cancelled when the task is cancelled while waiting (it then holds none of the `n` permits).
   * @throws TypeError outside a task.
   */
  acquire(n = 1): Operation<void> {
    if (n === 1) return this.acquireOne;
    checkCount(n, "Semaphore.acquire(n)", 0);
    if (this.sharedPermits !== null) checkShared(n + 1, "Semaphore.acquire(n)");
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
   * @throws RangeError when `n` is not an integer ≥ 0; for a shared
   * semaphore, when the count would exceed 2³¹ − 1.
   */
  release(n = 1): void {
    if (n !== 1) checkCount(n, "Semaphore.release(n)", 0);
    if (this.sharedPermits !== null) {
      this.sharedPermits.give(n);
      return;
    }
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
    if (this.sharedPermits !== null) return this.queue.head === null && this.sharedPermits.tryTake(n);
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
    const task = self("Semaphore.acquire()");
    const shared = this.sharedPermits;
    if (shared !== null) {
      // No local waiter: take the permits if nobody waits anywhere, or ask
      // for them (which may get them at once).
      if (this.queue.head === null && (shared.tryTake(n) || shared.want(n))) return done();
    } else if (this.queue.head === null && this.permits >= n) {
      this.permits -= n;
      return done();
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
      if (!w.wake()) this.permits += w.permits;
    }
  }

  /** @internal Shared: the head of the local queue left; this domain asks for what the new head needs. */
  headLeft(): void {
    const got = this.sharedPermits!.reask(this.queue.head?.permits ?? -1);
    if (got !== null) this.distribute(got);
  }

  /** @internal Shared: `amount` permits were handed to this domain, for its oldest waiters. */
  distribute(amount: number): void {
    const shared = this.sharedPermits!;
    for (;;) {
      let extra = amount;
      for (let w = this.queue.head; w !== null && extra >= w.permits; w = this.queue.head) {
        this.queue.shift();
        extra -= w.permits;
        // false: cancelled and detached before it could leave; its permits go on.
        if (!w.wake()) extra += w.permits;
      }
      if (extra > 0) shared.giveBack(extra);
      const head = this.queue.head;
      // The waiters left here ask again, behind the domains already waiting.
      if (head === null || !shared.want(head.permits)) return;
      amount = head.permits;
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
  if (!Number.isSafeInteger(n) || n < min) throw new RangeError(`${name} expects an integer ≥ ${min}, got ${describe(n)}`);
  return n;
}

const sharing: Sharing<Semaphore> = {
  kind: SEMAPHORE,
  local: "new Semaphore(n) or Semaphore.create(n)",
  shared: "Semaphore.shared(n)",
  type: Semaphore,
  agentOf: (s) => s.sharedPermits,
  make(id, cells) {
    const s = new Semaphore(0);
    s.sharedPermits = new SharedPermits(id, cells, s);
    return s;
  },
};

sharePortable(sharing);
