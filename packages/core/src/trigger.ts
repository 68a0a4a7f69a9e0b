/**
 * A one-shot wake-up for one suspended task: the building block of locks,
 * conditions and channels above core.
 */
import { currentKernel, currentTask } from "./kernel/current.js";
import type { Kernel } from "./kernel/kernel.js";
import type { Task } from "./kernel/task.js";
import { DONE_VOID, type Instruction, type Operation, RESUMED, SingleShot, SUSPENDED } from "./operation.js";

const INITIAL = 0;
const WAITING = 1;
const SIGNALLED = 2;

/**
 * A one-shot wake-up. One task waits on it with `yield* trigger.wait()`;
 * `trigger.signal()` (from any task of the same thread, or from a Node
 * callback) wakes it. Signalling first makes the wait return at once.
 * Waiting is cancellable: a cancelled waiter leaves with `Cancelled` and the
 * trigger stays unsignalled, so whoever signals it later can tell (by
 * `signal()` returning false) that nobody was woken and pass the signal on.
 *
 * @example
 * ```ts
 * const t = new B.Trigger();
 * const waiter = B.spawn(function* () { yield* t.wait(); return "woken"; });
 * yield* B.yieldNow();
 * t.signal();
 * yield* B.awaitExn(waiter);   // "woken"
 * ```
 */
// The cast is erased from the JavaScript; it makes the published declaration
// show an `Operation<void>` rather than the internal base class.
export class Trigger extends (SingleShot as abstract new () => Operation<void>) {
  private state = INITIAL;
  private waiter: Task | null = null;
  private kernel: Kernel | null = null;

  /** Whether `signal()` was called. */
  get isSignalled(): boolean {
    return this.state === SIGNALLED;
  }

  /** Whether a task is parked on this trigger right now. */
  get isAwaited(): boolean {
    return this.state === WAITING;
  }

  /**
   * Wakes the waiting task, or lets the next `wait` return at once. Returns
   * whether a task was woken. Signalling twice does nothing.
   *
   * @example
   * ```ts
   * if (!trigger.signal()) passToNextWaiter();
   * ```
   */
  signal(): boolean {
    const waiter = this.waiter;
    this.state = SIGNALLED;
    if (waiter === null) return false;
    this.waiter = null;
    this.kernel!.wake(waiter, RESUMED);
    return true;
  }

  /**
   * Suspends the current task until the trigger is signalled.
   *
   * @example
   * ```ts
   * yield* trigger.wait();
   * ```
   * @throws Cancelled when the task is cancelled while waiting.
   * @throws TypeError when another task already waits on this trigger.
   */
  wait(): Trigger {
    return this;
  }

  /** @internal */
  next(resumed?: unknown): IteratorResult<Instruction, void> {
    if (resumed !== undefined || this.state === SIGNALLED) return DONE_VOID;
    const task = currentTask("trigger.wait()");
    if (this.state === WAITING) {
      throw new TypeError(`${task} cannot wait on a trigger ${this.waiter} already waits on: a trigger wakes one task`);
    }
    this.state = WAITING;
    this.waiter = task;
    const k = currentKernel!;
    this.kernel = k;
    k.park(task, this);
    return SUSPENDED;
  }

  /** @internal */
  detach(): void {
    this.waiter = null;
    this.state = INITIAL;
  }

  /** @internal */
  describe(): string {
    return "wait on a trigger";
  }
}
