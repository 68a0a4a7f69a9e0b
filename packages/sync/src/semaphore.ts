/**
 * `Semaphore`: a fair counting semaphore, local to its domain
 * (`new Semaphore(n)`) or shared between domains (`Semaphore.shared(n)`).
 */
import { definePortable, type Instruction, type Operation, self, type Task } from "@bobbin/core";
import { type Body, checkBody, isGenerator } from "./call.js";
import { Agent, adopt, allocate, before, cellsOf, OWN, SEMAPHORE, type SharedData, TICKET } from "./shared.js";
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
    const data = allocate(SEMAPHORE, SLOT_WIDTH);
    const cells = new Int32Array(data.buffer);
    cells[PERMITS] = permits;
    return adopt(data.id, () => sharedSemaphore(data.id, cells));
  }

  /** Whether this semaphore's permits are shared between domains (made by {@link Semaphore.shared}). */
  get isShared(): boolean {
    return this.sharedPermits !== null;
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
    const task = self();
    const shared = this.sharedPermits;
    if (shared !== null) {
      // No local waiter: take the permits if nobody waits anywhere, or ask
      // for them (which may get them at once).
      if (this.queue.head === null && (shared.tryTake(n) || shared.want(n))) return DONE_OP;
    } else if (this.queue.head === null && this.permits >= n) {
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
        if (!w.trigger.signal()) extra += w.permits;
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
  if (!Number.isSafeInteger(n) || n < min) throw new RangeError(`${name} expects an integer ≥ ${min}, got ${String(n)}`);
  return n;
}

// -- across domains -----------------------------------------------------------
//
// Header: PERMITS, the count; WAITING, how many slots ask for permits (a
// newcomer takes permits directly only when it is 0, so nobody overtakes a
// waiting domain). Slot of a thread with waiters: STATE = need + 1 while it
// asks for `need` permits (its oldest waiter's), GRANTED once they were taken
// off the count for it; ORDER, its ticket. Whoever adds permits or starts
// asking runs `dispatch`, which serves the slots oldest first while the
// permits suffice for the oldest one. One domain dispatches at a time: the
// others leave a note (DIRTY) and the dispatcher goes round again, so nothing
// spins or waits.

const MAX_SHARED = 2 ** 31 - 1;
const PERMITS = OWN;
const WAITING = OWN + 1;
const DISPATCH = OWN + 2;
const DIRTY = OWN + 3;
const STATE = 1;
const ORDER = 2;
const SLOT_WIDTH = 3;
const NONE = 0;
const GRANTED = -1;

function checkShared(n: number, name: string): void {
  if (n > MAX_SHARED) throw new RangeError(`${name}: a shared semaphore counts up to 2^31 - 1, got ${n}`);
}

/** @internal This domain's side of a shared semaphore. */
export class SharedPermits extends Agent {
  /** Whether this domain asks for permits (its oldest waiter's `need`). */
  private wanting = false;
  private need = 0;

  constructor(
    readonly id: string,
    cells: Int32Array,
    private readonly semaphore: Semaphore,
  ) {
    super(cells, SLOT_WIDTH);
  }

  get available(): number {
    return Atomics.load(this.cells, PERMITS);
  }

  /** Takes `n` permits if nobody waits for some, in any domain. */
  tryTake(n: number): boolean {
    const cells = this.cells;
    if (Atomics.load(cells, WAITING) !== 0) return false;
    for (let p = Atomics.load(cells, PERMITS); p >= n; ) {
      const was = Atomics.compareExchange(cells, PERMITS, p, p - n);
      if (was === p) return true;
      p = was;
    }
    return false;
  }

  /** The oldest local waiter needs `n` permits: ask for them. True when they were taken for it at once. */
  want(n: number): boolean {
    this.wanting = true;
    this.need = n;
    return this.claim() && this.ask(true);
  }

  private ask(newTicket: boolean): boolean {
    const cells = this.cells;
    const base = this.base(this.slot);
    if (newTicket) Atomics.store(cells, base + ORDER, Atomics.add(cells, TICKET, 1));
    Atomics.add(cells, WAITING, 1);
    Atomics.store(cells, base + STATE, this.need + 1);
    this.dispatch();
    if (this.takeGrant()) return true;
    this.arm(base + STATE, this.need + 1);
    return false;
  }

  /** Whether the permits asked for were granted (then this domain stops asking). */
  private takeGrant(): boolean {
    if (Atomics.compareExchange(this.cells, this.base(this.slot) + STATE, GRANTED, NONE) !== GRANTED) return false;
    this.wanting = false;
    this.releaseSlot();
    return true;
  }

  /**
   * The oldest local waiter left; `next` is what the new one needs (-1: none
   * left). Returns permits granted meanwhile, for the caller to hand out, or null.
   */
  reask(next: number): number | null {
    if (!this.wanting) return null;
    if (this.slot < 0) {
      // Still waiting for a slot.
      if (next < 0) this.wanting = false;
      else this.need = next;
      return null;
    }
    const cells = this.cells;
    const state = this.base(this.slot) + STATE;
    const was = Atomics.compareExchange(cells, state, this.need + 1, NONE);
    if (was === GRANTED) {
      Atomics.store(cells, state, NONE);
      this.wanting = false;
      this.releaseSlot();
      return this.need;
    }
    Atomics.sub(cells, WAITING, 1);
    if (next >= 0) {
      // Same ticket: the domain keeps its place.
      this.need = next;
      return this.ask(false) ? next : null;
    }
    this.wanting = false;
    this.releaseSlot();
    this.dispatch(); // it may have held up the domains behind it
    return null;
  }

  /** `release(n)`: adds `n` permits, and serves the waiters they satisfy. */
  give(n: number): void {
    this.giveBack(n);
    // Served this domain's own request: its waiters are woken now.
    if (this.wanting && this.slot >= 0 && this.takeGrant()) this.semaphore.distribute(this.need);
  }

  /** Adds `n` permits and serves the other domains. */
  giveBack(n: number): void {
    const cells = this.cells;
    for (let p = Atomics.load(cells, PERMITS); ; ) {
      if (p + n > MAX_SHARED) throw new RangeError(`Semaphore.release(${n}): a shared semaphore counts up to 2^31 - 1 (${p} available)`);
      const was = Atomics.compareExchange(cells, PERMITS, p, p + n);
      if (was === p) break;
      p = was;
    }
    if (Atomics.load(cells, WAITING) !== 0) this.dispatch();
  }

  /** Serves the asking slots oldest first while the permits suffice, one domain at a time. */
  private dispatch(): void {
    const cells = this.cells;
    for (;;) {
      if (Atomics.compareExchange(cells, DISPATCH, 0, 1) !== 0) {
        // Another domain dispatches: it will go round again.
        Atomics.store(cells, DIRTY, 1);
        if (Atomics.compareExchange(cells, DISPATCH, 0, 1) !== 0) return;
      }
      Atomics.store(cells, DIRTY, 0);
      this.serve();
      Atomics.store(cells, DISPATCH, 0);
      if (Atomics.load(cells, DIRTY) === 0) return;
    }
  }

  private serve(): void {
    const cells = this.cells;
    for (;;) {
      let best = -1;
      let order = 0;
      let asked = 0;
      for (let i = 0, span = this.span(); i < span; i++) {
        const base = this.base(i);
        const s = Atomics.load(cells, base + STATE);
        if (s <= 0) continue;
        const o = Atomics.load(cells, base + ORDER);
        if (best < 0 || before(o, order)) {
          best = i;
          order = o;
          asked = s;
        }
      }
      if (best < 0) return;
      const need = asked - 1;
      const p = Atomics.load(cells, PERMITS);
      if (p < need) return; // the oldest must be served first
      if (Atomics.compareExchange(cells, PERMITS, p, p - need) !== p) continue;
      const state = this.base(best) + STATE;
      if (Atomics.compareExchange(cells, state, asked, GRANTED) === asked) {
        Atomics.sub(cells, WAITING, 1);
        Atomics.notify(cells, state);
      } else Atomics.add(cells, PERMITS, need); // it stopped asking meanwhile
    }
  }

  protected woken(): void {
    if (!this.wanting || this.slot < 0) return;
    if (this.takeGrant()) {
      this.semaphore.distribute(this.need);
      return;
    }
    const state = this.base(this.slot) + STATE;
    if (Atomics.load(this.cells, state) > 0) this.arm(state, this.need + 1);
  }

  protected slotFreed(): void {
    if (this.wanting && this.slot < 0 && this.claim() && this.ask(true)) this.semaphore.distribute(this.need);
  }
}

function sharedSemaphore(id: string, cells: Int32Array): Semaphore {
  const s = new Semaphore(0);
  s.sharedPermits = new SharedPermits(id, cells, s);
  return s;
}

definePortable<Semaphore, SharedData>("@bobbin/sync/Semaphore", {
  test: (value) => value instanceof Semaphore,
  encode(s) {
    const shared = s.sharedPermits;
    if (shared === null) {
      throw new TypeError(
        "a Semaphore made with new Semaphore(n) or Semaphore.create(n) belongs to its domain and cannot be passed to another: make it with Semaphore.shared(n)",
      );
    }
    return { id: shared.id, buffer: shared.cells.buffer as SharedArrayBuffer };
  },
  decode: (data) => adopt(data.id, () => sharedSemaphore(data.id, cellsOf(data, SEMAPHORE, SLOT_WIDTH))),
});
