/**
 * `Condition` (Miou's `Condition`): wait, with a mutex, until signalled;
 * local to its domain (`new Condition()`) or shared between domains
 * (`Condition.shared()`).
 *
 * The local side is here; the protocol across domains is `shared/condition.ts`.
 */
import { type Instruction, type Operation, self, type Task } from "@bobbin/core";
import { Mutex } from "./mutex.js";
import { CONDITION, SharedSignals } from "./shared/condition.js";
import { createShared, type Sharing, sharePortable } from "./shared/portable.js";
import { DONE, nextSerial, WaitOp, WaitQueue } from "./waiters.js";

/** @internal A task parked in `wait`. */
export class ConditionWait extends WaitOp<void> {
  /** @internal Shared condition: counted in this domain's slot, so signals from other domains can reach it. */
  registered = false;

  constructor(
    private readonly condition: Condition,
    task: Task<unknown>,
  ) {
    super(task);
  }

  protected resume(): IteratorResult<Instruction, void> {
    return DONE;
  }

  /** "wait on Condition#4" (a dump). */
  override describe(): string {
    return `wait on ${this.condition}`;
  }

  protected leave(): void {
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
  private readonly serial = nextSerial();

  /** `Condition#n`, as diagnostics name it. */
  toString(): string {
    return `Condition#${this.serial}`;
  }

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
    return createShared(sharing);
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
      if (w.wake()) return true;
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
    for (let w = this.queue.shift(); w !== null; w = this.queue.shift()) if (w.wake()) woken++;
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
    const task = self("Condition.wait()");
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

const sharing: Sharing<Condition> = {
  kind: CONDITION,
  local: "new Condition() or Condition.create()",
  shared: "Condition.shared()",
  type: Condition,
  agentOf: (c) => c.signals,
  make(id, cells) {
    const c = new Condition();
    c.signals = new SharedSignals(id, cells, c.queue);
    return c;
  },
};

sharePortable(sharing);
