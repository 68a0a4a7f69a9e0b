/**
 * `Suspender`: the building block of operations that wait for something
 * outside the task — a lock's release, a channel's value, a socket's
 * readiness, a timer. Locks and channels (`@bobbin/sync`) and I/O operations
 * (`@bobbin/unix`, `@bobbin/native-poll`) are written on it.
 *
 * The waker resumes the task directly (`wake()`): the task is queued at once,
 * with no `select` round trip, and one microtask at most per batch of
 * wake-ups made outside the run loop.
 */
import { heldWaitParked } from "./deadlock/report.js";
import { currentTask, runningTask } from "./kernel/current.js";
import { type Kernel, runningKernel } from "./kernel/kernel.js";
import type { Task } from "./kernel/task.js";
import { type Instruction, type Operation, RESUMED, SUSPENDED } from "./operation.js";

/** What a fired one-shot operation holds in place of a kernel (see `Suspender.signalOnce`). */
const FIRED = Symbol("fired");

/**
 * An operation that may park its task until something wakes it. Subclass it:
 *
 * - `start()` runs when `yield*` begins: finish at once with
 *   `this.complete(value)`, or register the operation where its waker will
 *   find it and return `this.suspend()`;
 * - `resume()` runs in the task after `wake()`: finish, or suspend again;
 * - `leave()` runs when the task stops waiting without being woken (it was
 *   cancelled, or interrupted by `L.interrupt` / a timeout): undo the
 *   registration. It runs synchronously, at the moment of the cancellation.
 *
 * The waker calls `wake()` (from any code of the same thread: another task,
 * a Node callback), which returns false when nobody waits any more — the
 * waker then passes what it had on to someone else. Errors thrown by
 * `start`/`resume` are thrown in the task. One operation object serves one
 * `yield*` at a time; it may be reused afterwards.
 *
 * @example
 * ```ts
 * class Next extends L.Suspender<number> {
 *   constructor(private readonly box: Box) { super(); }
 *   protected start() {
 *     if (this.box.values.length !== 0) return this.complete(this.box.values.shift()!);
 *     this.box.takers.push(this);
 *     return this.suspend();
 *   }
 *   protected resume() { return this.complete(this.box.values.shift()!); }
 *   protected leave() { this.box.takers.splice(this.box.takers.indexOf(this), 1); }
 * }
 * // the waker: box.values.push(v); box.takers.shift()?.wake();
 * const n = yield* new Next(box);
 * ```
 * @throws TypeError (from `yield*`) outside a task, or when a second task
 * waits on an operation object another task waits on.
 */
export abstract class Suspender<T> implements Operation<T>, Iterator<Instruction, T, unknown> {
  /** @internal The task parked here, while it waits. */
  private waiter: Task | null = null;
  /**
   * @internal Its kernel while it waits (after, the one it last parked in), or
   * `FIRED` once `signalOnce()` was called: one field for both, since a one-shot
   * wake-up (`Trigger`) is kept by every fiber that parks on one.
   */
  private kernel: Kernel | typeof FIRED | null = null;

  /** Starts the operation: `this.complete(value)` now, or register and `this.suspend()`. */
  protected abstract start(): IteratorResult<Instruction, T>;

  /** The task was woken: `this.complete(value)`, or register again and `this.suspend()`. */
  protected abstract resume(): IteratorResult<Instruction, T>;

  /** The task stops waiting without being woken (cancelled or interrupted): undo the registration. */
  protected abstract leave(): void;

  /** Whether a task waits on this operation right now. */
  get isWaiting(): boolean {
    return this.waiter !== null;
  }

  /**
   * Wakes the task waiting here: its `resume()` runs at its next step.
   * Returns false, doing nothing, when no task waits (it was woken already,
   * or it left).
   */
  wake(): boolean {
    const task = this.waiter;
    if (task === null) return false;
    this.waiter = null;
    (this.kernel as Kernel).wake(task, RESUMED);
    return true;
  }

  /**
   * Wakes the task waiting here by throwing `error` in it (its `resume()`
   * does not run). Returns false when no task waits.
   */
  wakeWithError(error: unknown): boolean {
    const task = this.waiter;
    if (task === null) return false;
    this.waiter = null;
    (this.kernel as Kernel).wakeWithError(task, error);
    return true;
  }

  /**
   * @internal For the one-shot wake-ups of core (`Trigger`): wakes the task
   * waiting here, if any, and marks the operation fired for good (until
   * `unfire`). Returns whether a task was woken.
   */
  protected signalOnce(): boolean {
    const woken = this.wake();
    this.kernel = FIRED;
    return woken;
  }

  /** @internal Whether `signalOnce()` was called (and not forgotten). */
  protected get signalledOnce(): boolean {
    return this.kernel === FIRED;
  }

  /** @internal The operation is as if never fired. */
  protected forgetSignal(): void {
    this.kernel = null;
  }

  /** Parks the current task on this operation; return it from `start()` or `resume()`. */
  protected suspend(): IteratorResult<Instruction, T> {
    // The class's name is read only to throw: at every park it cost an echo server's loop a call.
    const task = runningTask() ?? currentTask(this.constructor.name);
    if (this.waiter !== null) {
      throw new TypeError(`${task} cannot wait on an operation ${this.waiter} already waits on: make one operation object per wait`);
    }
    const k = runningKernel()!;
    this.waiter = task;
    this.kernel = k;
    k.park(task, this);
    return SUSPENDED;
  }

  /**
   * Parks the current task like `suspend()`, on a wait whose `waitsFor()`
   * names the task holding what it waits for (a contended lock's holder):
   * deadlock detection then looks for a cycle of such waits, once the
   * domain's current slice is over.
   */
  protected suspendHeld(): IteratorResult<Instruction, T> {
    const parked = this.suspend();
    heldWaitParked(this.kernel as Kernel);
    return parked;
  }

  /** The result that ends the operation with `value`. */
  protected complete(value: T): IteratorResult<Instruction, T> {
    return { done: true, value };
  }

  [Symbol.iterator](): this {
    return this;
  }

  /** The `yield*` protocol: the first call starts, a resumption resumes. */
  next(resumed?: unknown): IteratorResult<Instruction, T> {
    return resumed === undefined ? this.start() : this.resume();
  }

  /** The `yield*` protocol: a cancellation or an interruption travels through (`leave()` already ran). */
  throw(error: unknown): IteratorResult<Instruction, T> {
    throw error;
  }

  /** The `yield*` protocol: the fiber was closed while waiting here. */
  return(value?: T): IteratorResult<Instruction, T> {
    if (this.waiter !== null) {
      this.waiter = null;
      this.leave();
    }
    return { done: true, value: value as T };
  }

  /** @internal The kernel: the task leaves (cancelled or interrupted). */
  detach(): void {
    this.waiter = null;
    this.leave();
  }

  /** What the task waits on, in words (for dumps); override it to say it ("lock Mutex#3 held by main#1"). */
  describe(): string {
    return `an operation of class ${this.constructor.name} (its describe() does not say what it waits on)`;
  }

  /**
   * The task that alone can end this wait, if there is one (a lock's
   * holder), for deadlock detection: a cycle of such waits — a task waiting
   * for a lock held by a task that waits for it, through locks and awaited
   * children — can never end. Override it in waits that have such a task;
   * the default, null, means "anyone may end it" (a trigger, a condition, a
   * channel, I/O), which no cycle goes through.
   */
  waitsFor(): Task<unknown> | null {
    return null;
  }
}
