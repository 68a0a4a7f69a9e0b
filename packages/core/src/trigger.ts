/**
 * A one-shot wake-up for one suspended task: the simplest `Suspender`.
 */
import type { Instruction } from "./operation.js";
import { Suspender } from "./suspender.js";

const DONE: IteratorReturnResult<void> = { done: true, value: undefined };

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
 * const t = new L.Trigger();
 * const waiter = B.spawn(function* () { yield* t.wait(); return "woken"; });
 * yield* B.yieldNow();
 * t.signal();
 * yield* B.awaitExn(waiter);   // "woken"
 * ```
 */
export class Trigger extends Suspender<void> {
  // No field of its own: a trigger is the state of its `Suspender` (who waits, and whether it fired), and
  // every fiber parked on one keeps one.

  /** Whether `signal()` was called. */
  get isSignalled(): boolean {
    return this.signalledOnce;
  }

  /** Whether a task is parked on this trigger right now. */
  get isAwaited(): boolean {
    return this.isWaiting;
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
    return this.signalOnce();
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

  /** Returns at once when signalled already; otherwise parks. */
  protected start(): IteratorResult<Instruction, void> {
    if (this.signalledOnce) return DONE;
    return this.suspend();
  }

  /** Signalled: the wait is over. */
  protected resume(): IteratorResult<Instruction, void> {
    return DONE;
  }

  /** A cancelled waiter leaves the trigger unsignalled. */
  protected leave(): void {
    this.forgetSignal();
  }

  /** What the task waits on, in words. */
  override describe(): string {
    return "wait on a trigger";
  }
}
