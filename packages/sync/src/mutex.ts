/**
 * `Mutex` (Miou's `Mutex`): a fair (FIFO), task-owned, cancellation-aware lock,
 * local to its domain (`new Mutex()`) or shared between domains (`Mutex.shared()`).
 *
 * The local side is here; the protocol across domains is `shared/mutex.ts`.
 */
import { Domain, type Instruction, type Operation, self, type Task } from "@bobbin/core";
import { done } from "@bobbin/core/lowlevel";
import { type Body, checkBody, isGenerator } from "./call.js";
import { MutexAlreadyHeld, MutexNotHolder, MutexNotLocked } from "./errors.js";
import { MUTEX, SharedLock } from "./shared/mutex.js";
import { createShared, type Sharing, sharePortable } from "./shared/portable.js";
import { DONE, nextSerial, WaitOp, WaitQueue } from "./waiters.js";

/** A task parked in `lock`: the unlocker makes it the holder before waking it. */
class LockWait extends WaitOp<void> {
  constructor(
    private readonly mutex: Mutex,
    task: Task<unknown>,
  ) {
    super(task);
  }

  protected resume(): IteratorResult<Instruction, void> {
    return DONE;
  }

  /** Parks as a wait held by the mutex's holder (deadlock detection follows it). */
  protected override start(): IteratorResult<Instruction, void> {
    return this.suspendHeld();
  }

  /** "lock Mutex#3 held by handler#9" (a dump). */
  override describe(): string {
    const m = this.mutex;
    const holder = m.holderTask !== null ? String(m.holderTask) : m.sharedLock?.isLocked ? "a task of another domain" : "nobody yet";
    return `lock ${m} held by ${holder}`;
  }

  /** Deadlock detection: only the holder can end this wait (a holder of another domain is not followed). */
  override waitsFor(): Task<unknown> | null {
    return this.mutex.holderTask;
  }

  protected leave(): void {
    const m = this.mutex;
    if (!m.queue.remove(this) || m.sharedLock === null) return;
    // The last local waiter left: stop asking the other domains; if the lock
    // was handed to this domain meanwhile, pass it on.
    if (m.queue.size === 0 && m.holderTask === null && m.sharedLock.withdraw()) m.serveLocal();
  }
}

/**
 * A mutual-exclusion lock owned by the task that locked it.
 *
 * - **Fair**: waiters get the lock in the order they asked for it; `unlock`
 *   hands it directly to the oldest waiter (no barging, no starvation).
 * - **Task-owned**: only the holder may unlock it (`MutexNotHolder`); locking
 *   it again from the holder is an error (`MutexAlreadyHeld`) rather than a
 *   deadlock; unlocking a free mutex is `MutexNotLocked`.
 * - **Cancellation-aware**: a task cancelled while waiting leaves the queue
 *   with `Cancelled` and never gets the lock; `protect` and the `using` guard
 *   unlock on every exit, cancellation included.
 * - **Cheap when free**: locking a free mutex does not suspend and allocates
 *   nothing; only a contended `lock` parks the task on a `Trigger`.
 *
 * A mutex made with {@link Mutex.shared} works across domains: pass it to
 * `B.call`/`B.parallel` and the parallel task gets a `Mutex` over the same
 * lock (see the package README, "Across domains").
 *
 * @example
 * ```ts
 * import { Mutex } from "@bobbin/sync";
 * const m = new Mutex();
 * yield* m.lock();
 * try { counter++; } finally { m.unlock(); }
 * yield* m.protect(function* () { counter++; yield* B.yieldNow(); });   // same, shorter
 * { using _ = yield* m.guard(); counter++; }                            // same, with `using`
 * ```
 * @throws MutexNotLocked, MutexNotHolder, MutexAlreadyHeld: misuse, from the methods (see each).
 */
export class Mutex {
  /** @internal The holder, when it is a task of this domain. */ holderTask: Task<unknown> | null = null;
  /** @internal Waiters of this domain. */ readonly queue = new WaitQueue<LockWait>();
  /** @internal The lock shared with other domains, for `Mutex.shared()`. */ sharedLock: SharedLock | null = null;
  private readonly lockOp: Operation<void>;
  private readonly guardOp: Operation<MutexGuard>;
  private readonly serial = nextSerial();

  constructor() {
    // One operation per mutex: `yield*` calls [Symbol.iterator]() exactly when
    // the lock is taken, so the free path returns a shared done-iterator and
    // allocates nothing; `m.lock()` without `yield*` does nothing at all.
    this.lockOp = { [Symbol.iterator]: () => this.startLock() };
    this.guardOp = { [Symbol.iterator]: () => new GuardStart(this, this.startLock()) };
  }

  /**
   * Makes a new, unlocked mutex (Miou's `Mutex.create`).
   *
   * @example
   * ```ts
   * const m = Mutex.create();
   * ```
   */
  static create(): Mutex {
    return new Mutex();
  }

  /**
   * Makes a new, unlocked mutex that works across domains: passed to
   * `B.call`/`B.parallel` (as an argument, or inside plain arrays and
   * objects), it arrives in the parallel task as a `Mutex` over the same lock.
   * The lock lives in a `SharedArrayBuffer`; a task waiting for it parks
   * (`Atomics.waitAsync`) without blocking its domain. Same methods, errors
   * and cancellation rules as a local mutex; FIFO within a domain, and the
   * domains waiting are served in the order they started waiting (see the
   * package README, "Across domains").
   *
   * @example
   * ```ts
   * // tasks.ts
   * export const add = B.defineTask(import.meta.url, "add", function* (m: Mutex, cells: Int32Array) {
   *   yield* m.protect(function* () { const v = cells[0]!; yield* B.yieldNow(); cells[0] = v + 1; });
   * });
   * // main.ts
   * const m = Mutex.shared();
   * const cells = new Int32Array(new SharedArrayBuffer(4));
   * yield* B.awaitAll([B.call(add, m, cells), B.call(add, m, cells)]);   // cells[0] === 2
   * ```
   */
  static shared(): Mutex {
    return createShared(sharing);
  }

  /** `Mutex#n`, as diagnostics name it. */
  toString(): string {
    return `Mutex#${this.serial}`;
  }

  /** Whether this mutex works across domains (made by {@link Mutex.shared}). */
  get isShared(): boolean {
    return this.sharedLock !== null;
  }

  /** Whether some task holds the mutex (of any domain, for a shared mutex). */
  get isLocked(): boolean {
    return this.holderTask !== null || this.sharedLock?.isLocked === true;
  }

  /** The task holding the mutex, or `null`; for a shared mutex, `null` as well when the holder is a task of another domain. */
  get holder(): Task<unknown> | null {
    return this.holderTask;
  }

  /** How many tasks are waiting in `lock` (of this domain, for a shared mutex; cancelled waiters are never counted). */
  get waiters(): number {
    return this.queue.size;
  }

  /**
   * Takes the lock, waiting (FIFO) while another task holds it. A free mutex
   * is taken at once without suspending.
   *
   * @example
   * ```ts
   * yield* m.lock();
   * try { critical(); } finally { m.unlock(); }
   * ```
   * @throws MutexAlreadyHeld when the current task already holds it.
   * @throws Cancelled when the task is cancelled while waiting (it then does not hold the lock).
   * @throws TypeError outside a task.
   */
  lock(): Operation<void> {
    return this.lockOp;
  }

  /**
   * Releases the lock; the oldest waiter (if any) becomes the holder and is woken.
   *
   * @example
   * ```ts
   * m.unlock();
   * ```
   * @throws MutexNotLocked when nobody holds the mutex.
   * @throws MutexNotHolder when another task holds it.
   * @throws TypeError outside a task.
   */
  unlock(): void {
    const task = self("Mutex.unlock()");
    if (this.holderTask !== task) throw this.notHolder(task, "unlock");
    if (this.sharedLock === null) this.handOff();
    else this.handOffShared();
  }

  /**
   * Takes the lock only if it is free (no holder, hence no waiter either) and
   * says whether it did. Never suspends. Returns false when the current task
   * already holds it.
   *
   * @example
   * ```ts
   * if (m.tryLock()) { try { critical(); } finally { m.unlock(); } }
   * ```
   * @throws TypeError outside a task.
   */
  tryLock(): boolean {
    const task = self("Mutex.tryLock()");
    if (this.holderTask !== null) return false;
    const shared = this.sharedLock;
    if (shared !== null) {
      // Waiters of this domain (or of others, holding the lock) come first.
      if (this.queue.size !== 0 || !shared.tryAcquire()) return false;
      this.take(shared, task);
      return true;
    }
    this.holderTask = task;
    return true;
  }

  /**
   * Runs `fn(...args)` holding the lock and always unlocks afterwards: on
   * return, on throw and on cancellation (Miou's `Mutex.protect`). `fn` may be
   * a generator function (its body can suspend) or a plain function.
   *
   * @example
   * ```ts
   * const n = yield* m.protect(function* (k: number) { yield* B.yieldNow(); return (counter += k); }, 2);
   * yield* m.protect(() => console.log("no interleaving here"));
   * ```
   * @throws whatever `fn` throws (an unlock error is then ignored).
   * @throws MutexAlreadyHeld, Cancelled, TypeError: as `lock`.
   */
  protect<A extends unknown[], T>(fn: (...args: A) => Generator<Instruction, T, unknown>, ...args: A): Operation<T>;
  protect<A extends unknown[], T>(fn: (...args: A) => T, ...args: A): Operation<T>;
  protect<A extends unknown[], T>(fn: Body<A, T>, ...args: A): Operation<T> {
    checkBody(fn, "Mutex.protect");
    return protectBody(this, fn, args);
  }

  /**
   * Takes the lock and returns a guard that unlocks it when disposed: made
   * for `using`, which disposes it on every exit of the block, cancellation
   * included. Disposing twice does nothing.
   *
   * @example
   * ```ts
   * {
   *   using _ = yield* m.guard();
   *   yield* work();
   * }   // unlocked here, however the block was left
   * ```
   * @throws MutexAlreadyHeld, Cancelled, TypeError: as `lock`.
   */
  guard(): Operation<MutexGuard> {
    return this.guardOp;
  }

  /**
   * Miou-style `Mutex.lock(m)`: the same as `m.lock()`.
   * @example
   * ```ts
   * yield* Mutex.lock(m);
   * ```
   * @throws as {@link Mutex.lock}.
   */
  static lock(m: Mutex): Operation<void> {
    return checkMutex(m, "Mutex.lock").lock();
  }

  /**
   * Miou-style `Mutex.unlock(m)`: the same as `m.unlock()`.
   * @example
   * ```ts
   * Mutex.unlock(m);
   * ```
   * @throws as {@link Mutex.unlock}.
   */
  static unlock(m: Mutex): void {
    checkMutex(m, "Mutex.unlock").unlock();
  }

  /**
   * Miou-style `Mutex.try_lock(m)`: the same as `m.tryLock()`.
   * @example
   * ```ts
   * if (Mutex.tryLock(m)) Mutex.unlock(m);
   * ```
   * @throws as {@link Mutex.tryLock}.
   */
  static tryLock(m: Mutex): boolean {
    return checkMutex(m, "Mutex.tryLock").tryLock();
  }

  /**
   * Miou-style `Mutex.protect(m, fn)`: the same as `m.protect(fn, ...args)`.
   * @example
   * ```ts
   * yield* Mutex.protect(out, () => console.log("new client"));
   * ```
   * @throws as {@link Mutex.protect}.
   */
  static protect<A extends unknown[], T>(m: Mutex, fn: (...args: A) => Generator<Instruction, T, unknown>, ...args: A): Operation<T>;
  static protect<A extends unknown[], T>(m: Mutex, fn: (...args: A) => T, ...args: A): Operation<T>;
  static protect<A extends unknown[], T>(m: Mutex, fn: Body<A, T>, ...args: A): Operation<T> {
    checkMutex(m, "Mutex.protect");
    checkBody(fn, "Mutex.protect");
    return protectBody(m, fn, args);
  }

  // -- internals ------------------------------------------------------------

  private startLock(): Iterator<Instruction, void, unknown> {
    const task = self("Mutex.lock()");
    const holder = this.holderTask;
    if (holder === null) {
      const shared = this.sharedLock;
      if (shared === null) {
        this.holderTask = task;
        return done();
      }
      // No local waiter: take the shared lock if it is free, or ask for it
      // (which may get it at once, when it was freed meanwhile).
      if (this.queue.size === 0 && (shared.tryAcquire() || shared.want())) {
        this.take(shared, task);
        return done();
      }
    } else if (holder === task) throw new MutexAlreadyHeld(task.uid);
    const w = new LockWait(this, task);
    this.queue.push(w);
    return w;
  }

  /** @internal The error for `task` using the mutex as its holder (`unlock`, `Condition.wait`) when it is not. */
  notHolder(task: Task<unknown>, operation: string): Error {
    const holder = this.holderTask;
    const shared = this.sharedLock;
    if (shared === null) {
      if (holder !== null) return new MutexNotHolder(task.uid, holder.uid, operation);
    } else {
      if (holder !== null) return new MutexNotHolder(task.uid, holder.uid, operation, Domain.self());
      if (shared.isLocked) {
        const remote = shared.holderOf();
        return new MutexNotHolder(task.uid, remote?.task ?? null, operation, remote?.domain ?? null);
      }
    }
    return operation === "unlock" ? new MutexNotLocked(task.uid) : new MutexNotHolder(task.uid, null, operation);
  }

  /** The shared lock is this domain's: `task` holds it. */
  private take(shared: SharedLock, task: Task<unknown>): void {
    this.holderTask = task;
    shared.setHolder(task.uid);
  }

  /** A shared mutex's holder unlocked: another domain's turn if one waits, else the next local waiter. */
  private handOffShared(): void {
    const shared = this.sharedLock!;
    this.holderTask = null;
    if (!shared.grantNext()) {
      this.serveLocal();
      return;
    }
    // The waiters left here ask again, behind the domains already waiting.
    if (this.queue.size !== 0 && shared.want()) this.serveLocal();
  }

  /**
   * @internal The shared lock is this domain's and no task of it holds it:
   * the oldest local waiter gets it, or it is released.
   */
  serveLocal(): void {
    const shared = this.sharedLock!;
    for (;;) {
      const w = this.queue.shift();
      if (w === null) break;
      this.take(shared, w.task);
      if (w.wake()) return; // false: cancelled and detached; try the next one
    }
    this.holderTask = null;
    shared.release();
  }

  /** Gives the lock to the oldest waiter still able to take it, or frees it. */
  private handOff(): void {
    for (;;) {
      const w = this.queue.shift();
      if (w === null) {
        this.holderTask = null;
        return;
      }
      this.holderTask = w.task;
      // false: that waiter was cancelled and detached before it could leave
      // the queue itself; it will not run as the holder, so try the next one.
      if (w.wake()) return;
    }
  }
}

/**
 * What `Mutex.guard` returns: unlocks the mutex when disposed (`using`).
 *
 * @example
 * ```ts
 * using g = yield* m.guard();
 * g.unlock();   // early, optional; the disposal then does nothing
 * ```
 * @throws MutexNotHolder when unlocked or disposed from another task than the holder.
 */
export class MutexGuard implements Disposable {
  private released = false;

  /** @internal */
  constructor(private readonly mutex: Mutex) {}

  /**
   * Unlocks now, once; later calls and the disposal do nothing.
   * @throws MutexNotHolder when called from another task than the holder.
   */
  unlock(): void {
    if (this.released) return;
    this.mutex.unlock();
    this.released = true;
  }

  /** @throws MutexNotHolder when disposed from another task than the holder. */
  [Symbol.dispose](): void {
    this.unlock();
  }
}

/** The operation of `guard()`: the lock operation, then a fresh guard (no generator). */
class GuardStart implements Iterator<Instruction, MutexGuard, unknown> {
  constructor(
    private readonly mutex: Mutex,
    private readonly locking: Iterator<Instruction, void, unknown>,
  ) {}

  next(resumed?: unknown): IteratorResult<Instruction, MutexGuard> {
    const r = this.locking.next(resumed);
    return r.done === true ? { done: true, value: new MutexGuard(this.mutex) } : r;
  }

  throw(error: unknown): IteratorResult<Instruction, MutexGuard> {
    this.locking.throw!(error);
    throw error;
  }

  return(): IteratorResult<Instruction, MutexGuard> {
    this.locking.return?.();
    return { done: true, value: undefined as unknown as MutexGuard };
  }
}

function* protectBody<A extends unknown[], T>(m: Mutex, fn: Body<A, T>, args: A): Generator<Instruction, T, unknown> {
  yield* m.lock();
  let result: T;
  try {
    // Inlined callBody: one generator per protect, not two.
    const r = args.length === 0 ? (fn as () => unknown)() : fn(...args);
    result = (isGenerator(r) ? yield* r : r) as T;
  } catch (error) {
    // `fn`'s error matters more than an unlock error (fn may have unlocked by mistake).
    try {
      m.unlock();
    } catch {
      // ignored
    }
    throw error;
  }
  m.unlock();
  return result;
}

function checkMutex(m: unknown, name: string): Mutex {
  if (!(m instanceof Mutex)) throw new TypeError(`${name} expects a Mutex (new Mutex() or Mutex.create())`);
  return m;
}

const sharing: Sharing<Mutex> = {
  kind: MUTEX,
  local: "new Mutex() or Mutex.create()",
  shared: "Mutex.shared()",
  type: Mutex,
  agentOf: (m) => m.sharedLock,
  make(id, cells) {
    const m = new Mutex();
    m.sharedLock = new SharedLock(id, cells, m);
    return m;
  },
};

sharePortable(sharing);
