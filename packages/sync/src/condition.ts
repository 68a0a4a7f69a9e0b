/**
 * `Condition` (Miou's `Condition`): wait, with a mutex, until signalled;
 * local to its domain (`new Condition()`) or shared between domains
 * (`Condition.shared()`).
 */
import { definePortable, type Instruction, type Operation, self, type Task } from "@bobbin/core";
import { Mutex } from "./mutex.js";
import { Agent, adopt, allocate, CONDITION, cellsOf, OWN, type SharedData } from "./shared.js";
import { DONE, WaitOp, WaitQueue } from "./waiters.js";

/** A task parked in `wait`. */
class ConditionWait extends WaitOp<void> {
  /** @internal Shared condition: counted in this domain's slot, so signals from other domains can reach it. */
  registered = false;

  constructor(
    private readonly condition: Condition,
    task: Task<unknown>,
  ) {
    super(task);
  }

  protected woken(): IteratorResult<Instruction, void> {
    return DONE;
  }

  protected left(): void {
    const c = this.condition;
    if (c.queue.remove(this) && this.registered) c.signals!.forget();
  }
}

const NONE: unique symbol = Symbol("none");

/**
 * A condition variable: tasks wait on it, with a {@link Mutex} held, until
 * another task signals it.
 *
 * - `wait(m)` atomically releases `m` and parks; it re-acquires `m` before
 *   returning, in every case: woken, cancelled, or cancelled after being
 *   woken. Always wait in a loop on your predicate (spurious wake-ups are
 *   allowed, and another task may get the mutex first).
 * - `signal()` wakes the oldest waiter, `broadcast()` wakes them all. A
 *   condition has no memory: signalling with no waiter does nothing.
 * - Cancellation: a waiter cancelled while parked leaves the queue (a later
 *   `signal` goes to the next waiter); a waiter that had already been woken
 *   and is cancelled while re-acquiring the mutex passes its signal on to the
 *   next waiter, so no wake-up is lost.
 * - {@link Condition.shared} makes one that works across domains, with a
 *   shared {@link Mutex}.
 *
 * @example
 * ```ts
 * const m = new Mutex(), nonEmpty = new Condition();
 * const items: number[] = [];
 * // consumer
 * const item = yield* m.protect(function* () {
 *   while (items.length === 0) yield* nonEmpty.wait(m);
 *   return items.shift()!;
 * });
 * // producer
 * yield* m.protect(() => { items.push(1); nonEmpty.signal(); });
 * ```
 * @throws MutexNotHolder from `wait` when the mutex is not held; Cancelled from a cancelled `wait`.
 */
export class Condition {
  /** @internal Waiters of this domain. */ readonly queue = new WaitQueue<ConditionWait>();
  /** @internal The signals shared with other domains, for `Condition.shared()`. */ signals: SharedSignals | null = null;

  /**
   * Makes a new condition (Miou's `Condition.create`).
   * @example
   * ```ts
   * const c = Condition.create();
   * ```
   */
  static create(): Condition {
    return new Condition();
  }

  /**
   * Makes a new condition that works across domains: passed to
   * `B.call`/`B.parallel` (with the shared {@link Mutex} that protects its
   * state, made by `Mutex.shared()`), it arrives in the parallel task as a
   * `Condition` whose `signal`/`broadcast` reach the waiters of every domain.
   * Waiting parks the task (`Atomics.waitAsync`) without blocking its domain.
   *
   * @example
   * ```ts
   * const m = Mutex.shared(), ready = Condition.shared();
   * const flag = new Int32Array(new SharedArrayBuffer(4));
   * const t = B.call(waitUntilSet, m, ready, flag);   // m.protect(() => { while (!flag[0]) yield* ready.wait(m); })
   * yield* m.protect(() => { flag[0] = 1; ready.broadcast(); });
   * yield* B.awaitExn(t);
   * ```
   */
  static shared(): Condition {
    const data = allocate(CONDITION, SLOT_WIDTH);
    return adopt(data.id, () => sharedCondition(data.id, new Int32Array(data.buffer)));
  }

  /** Whether this condition works across domains (made by {@link Condition.shared}). */
  get isShared(): boolean {
    return this.signals !== null;
  }

  /** How many tasks are parked in `wait` (of this domain, for a shared condition; cancelled waiters are never counted). */
  get waiters(): number {
    return this.queue.size;
  }

  /**
   * Releases `m`, waits until signalled, then takes `m` again before
   * returning. `m` must be held by the current task.
   *
   * @example
   * ```ts
   * yield* m.lock();
   * try {
   *   while (!ready) yield* c.wait(m);
   * } finally { m.unlock(); }
   * ```
   * @throws MutexNotHolder when the current task does not hold `m`.
   * @throws Cancelled when the task is cancelled while waiting; `m` is held
   * again when it is thrown, so the caller's `finally`/`protect` unlocks it.
   * @throws TypeError outside a task, or when `m` is not a Mutex.
   */
  wait(m: Mutex): Operation<void> {
    if (!(m instanceof Mutex)) throw new TypeError("Condition.wait expects the Mutex that protects the condition's state");
    return this.waitOn(m);
  }

  /**
   * Wakes the oldest waiter, if any; returns whether one was woken.
   * Callable from any task, and from plain callbacks. A shared condition
   * wakes the oldest waiter of one domain that has waiters, taking the
   * domains in turn; a waiter of another domain wakes when its domain's event
   * loop runs.
   *
   * @example
   * ```ts
   * yield* m.protect(() => { ready = true; c.signal(); });
   * ```
   */
  signal(): boolean {
    if (this.signals !== null) return this.signals.signal();
    return this.wakeOne();
  }

  private wakeOne(): boolean {
    for (;;) {
      const w = this.queue.shift();
      if (w === null) return false;
      // false: that waiter was cancelled and detached before it left the
      // queue itself; the signal goes on to the next one.
      if (w.trigger.signal()) return true;
    }
  }

  /**
   * Wakes every waiter; returns how many were woken. Callable from any task,
   * and from plain callbacks. A shared condition wakes the waiters of every
   * domain (counting those of other domains that it reached).
   *
   * @example
   * ```ts
   * yield* m.protect(() => { stopping = true; c.broadcast(); });
   * ```
   */
  broadcast(): number {
    if (this.signals !== null) return this.signals.broadcast();
    let woken = 0;
    for (let w = this.queue.shift(); w !== null; w = this.queue.shift()) if (w.trigger.signal()) woken++;
    return woken;
  }

  /**
   * Miou-style `Condition.wait(c, m)`: the same as `c.wait(m)`.
   * @example
   * ```ts
   * yield* Condition.wait(c, m);
   * ```
   * @throws as {@link Condition.wait}.
   */
  static wait(c: Condition, m: Mutex): Operation<void> {
    return checkCondition(c, "Condition.wait").wait(m);
  }

  /**
   * Miou-style `Condition.signal(c)`: the same as `c.signal()`.
   * @example
   * ```ts
   * Condition.signal(c);
   * ```
   * @throws TypeError when `c` is not a Condition.
   */
  static signal(c: Condition): boolean {
    return checkCondition(c, "Condition.signal").signal();
  }

  /**
   * Miou-style `Condition.broadcast(c)`: the same as `c.broadcast()`.
   * @example
   * ```ts
   * Condition.broadcast(c);
   * ```
   * @throws TypeError when `c` is not a Condition.
   */
  static broadcast(c: Condition): number {
    return checkCondition(c, "Condition.broadcast").broadcast();
  }

  private *waitOn(m: Mutex): Generator<Instruction, void, unknown> {
    const task = self();
    if (m.holderTask !== task) throw m.notHolder(task, "wait on a condition");
    const w = new ConditionWait(this, task);
    this.queue.push(w); // queued before the unlock: a signal given right after it is not lost
    this.signals?.register(w);
    m.unlock();
    let error: unknown = NONE;
    let signalled = false;
    try {
      yield* w;
      signalled = true;
    } catch (e) {
      error = e; // cancelled while parked: `w` has left the queue
    }
    // Take the mutex back in every case. A cancellation is delivered once: if
    // it interrupts this lock, the second lock cannot be interrupted.
    try {
      yield* m.lock();
    } catch (e) {
      if (error === NONE) error = e;
      yield* m.lock();
    }
    if (error !== NONE) {
      if (signalled) this.signal(); // woken, then cancelled: pass the signal on
      throw error;
    }
  }
}

function checkCondition(c: unknown, name: string): Condition {
  if (!(c instanceof Condition)) throw new TypeError(`${name} expects a Condition (new Condition() or Condition.create())`);
  return c;
}

// -- across domains -----------------------------------------------------------
//
// Slot of a thread with waiters: AVAIL, how many of its waiters no signal has
// picked yet, and TOKENS, signals sent to it and not yet handed to a waiter.
// A signaller takes one from some AVAIL (compare-and-swap), adds a token to
// that slot and notifies it; the thread's agent hands each token to its oldest
// waiter. The thread keeps, per slot, waiters = AVAIL + tokens on their way −
// `debt`: a waiter cancelled when every waiter was already picked owes a
// token, which it passes on at once (another signal), and the token it was
// picked with is dropped when it arrives.

const CURSOR = OWN;
const AVAIL = 1;
const TOKENS = 2;
const SLOT_WIDTH = 3;

/** @internal This domain's side of a shared condition. */
export class SharedSignals extends Agent {
  /** Tokens to drop when they arrive (see above). */
  private debt = 0;

  constructor(
    readonly id: string,
    cells: Int32Array,
    private readonly condition: Condition,
  ) {
    super(cells, SLOT_WIDTH);
  }

  /** A local waiter was just queued: count it in this domain's slot. */
  register(w: ConditionWait): void {
    const had = this.slot >= 0;
    if (!this.claim()) return; // no slot: woken (spuriously) once one is free
    if (!had) this.wakeUnregistered(w);
    w.registered = true;
    Atomics.add(this.cells, this.base(this.slot) + AVAIL, 1);
    this.arm(this.base(this.slot) + TOKENS, 0);
  }

  /** A registered waiter left the queue without a token. */
  forget(): void {
    const avail = this.base(this.slot) + AVAIL;
    if (!takeOne(this.cells, avail)) {
      // Every waiter here was picked already: one of those tokens was for it.
      this.debt++;
      this.signal();
    }
    this.idle();
  }

  signal(): boolean {
    const cells = this.cells;
    const span = this.span();
    if (span === 0) return false;
    const start = (Atomics.add(cells, CURSOR, 1) >>> 0) % span;
    for (let k = 0; k < span; k++) {
      const i = (start + k) % span;
      if (takeOne(cells, this.base(i) + AVAIL)) {
        this.send(i, 1);
        return true;
      }
    }
    return false;
  }

  broadcast(): number {
    let woken = 0;
    for (let i = 0, span = this.span(); i < span; i++) {
      const n = Atomics.exchange(this.cells, this.base(i) + AVAIL, 0);
      if (n > 0) {
        woken += n;
        this.send(i, n);
      }
    }
    return woken;
  }

  private send(slot: number, n: number): void {
    if (slot === this.slot) {
      this.deliver(n); // this domain's waiters: woken now
      return;
    }
    const tokens = this.base(slot) + TOKENS;
    Atomics.add(this.cells, tokens, n);
    Atomics.notify(this.cells, tokens);
  }

  /** Hands `n` tokens to the oldest local waiters. */
  private deliver(n: number): void {
    const paid = Math.min(n, this.debt);
    this.debt -= paid;
    n -= paid;
    const queue = this.condition.queue;
    while (n > 0) {
      const w = queue.shift();
      if (w === null) break; // cannot happen: every token has its waiter
      if (w.trigger.signal()) n--;
      else if (!takeOne(this.cells, this.base(this.slot) + AVAIL)) {
        // Cancelled and detached before it could leave: it was one of the
        // picked ones, so this token goes to another waiter, anywhere.
        n--;
        this.signal();
      }
    }
    this.idle();
  }

  protected woken(): void {
    if (this.slot < 0) return;
    const n = Atomics.exchange(this.cells, this.base(this.slot) + TOKENS, 0);
    if (n > 0) this.deliver(n);
    if (this.slot >= 0) this.arm(this.base(this.slot) + TOKENS, 0);
  }

  protected slotFreed(): void {
    if (this.condition.queue.size !== 0 && this.slot < 0 && this.claim()) this.wakeUnregistered(null);
  }

  /**
   * Waiters queued while this domain had no slot missed the signals sent
   * meanwhile: wake them (a spurious wake-up, which `wait` allows), they wait
   * again with the slot.
   */
  private wakeUnregistered(except: ConditionWait | null): void {
    const queue = this.condition.queue;
    for (let w = queue.head; w !== null; ) {
      const next = w.after as ConditionWait | null;
      if (w !== except && !w.registered) {
        queue.remove(w);
        w.trigger.signal();
      }
      w = next;
    }
    this.idle();
  }

  /** Gives the slot back once nothing here needs it. */
  private idle(): void {
    if (this.slot < 0 || this.debt !== 0) return;
    const base = this.base(this.slot);
    if (this.condition.queue.size !== 0 || Atomics.load(this.cells, base + TOKENS) !== 0) return;
    this.releaseSlot();
  }
}

/** Decrements `cells[index]` if it is positive; whether it did. */
function takeOne(cells: Int32Array, index: number): boolean {
  for (let n = Atomics.load(cells, index); n > 0; ) {
    const was = Atomics.compareExchange(cells, index, n, n - 1);
    if (was === n) return true;
    n = was;
  }
  return false;
}

function sharedCondition(id: string, cells: Int32Array): Condition {
  const c = new Condition();
  c.signals = new SharedSignals(id, cells, c);
  return c;
}

definePortable<Condition, SharedData>("@bobbin/sync/Condition", {
  test: (value) => value instanceof Condition,
  encode(c) {
    const shared = c.signals;
    if (shared === null) {
      throw new TypeError(
        "a Condition made with new Condition() or Condition.create() belongs to its domain and cannot be passed to another: make it with Condition.shared()",
      );
    }
    return { id: shared.id, buffer: shared.cells.buffer as SharedArrayBuffer };
  },
  decode: (data) => adopt(data.id, () => sharedCondition(data.id, cellsOf(data, CONDITION, SLOT_WIDTH))),
});
