/**
 * Interop with Promises and AbortSignals, for tasks living among JS libraries.
 */

import { Cancelled } from "./errors.js";
import { type Instruction, type Operation, RESUMED, SingleShot, SUSPENDED } from "./operation.js";
import { currentTask } from "./scheduler.js";
import { F, State, type Task, type Waiter } from "./task.js";

class PromiseOp<T> extends SingleShot<T> implements Waiter {
  private task: Task | null = null;
  private controller: AbortController | null = null;
  private settled = false;
  private value: unknown = undefined;
  private failed = false;

  constructor(private readonly fn: (signal: AbortSignal) => PromiseLike<T> | T) {
    super();
  }

  next(resumed?: unknown): IteratorResult<Instruction, T> {
    if (resumed !== undefined) {
      if (this.failed) throw this.value;
      return { done: true, value: this.value as T };
    }
    const task = currentTask("promise()");
    if (typeof this.fn !== "function") throw new TypeError("promise(fn) expects a function (signal) => Promise");
    const controller = new AbortController();
    const pending = this.fn(controller.signal);
    this.task = task;
    this.controller = controller;
    task.waiter = this;
    Promise.resolve(pending).then(
      (value) => this.settle(false, value),
      (error: unknown) => this.settle(true, error),
    );
    return SUSPENDED;
  }

  private settle(failed: boolean, value: unknown): void {
    const task = this.task;
    if (this.settled || task === null) return;
    this.settled = true;
    this.failed = failed;
    this.value = value;
    task.sched.resume(task, RESUMED);
  }

  detach(): void {
    this.task = null;
    this.controller!.abort(new DOMException("the task was cancelled", "AbortError"));
  }
}

/**
 * Waits for a Promise. `fn` receives an `AbortSignal` that is aborted when the
 * task is cancelled while waiting; the task then ends with `Cancelled`
 * whatever the Promise does. Needs no events backend.
 *
 * @example
 * ```ts
 * const res = yield* B.promise((signal) => fetch("http://127.0.0.1:8080/", { signal }));
 * yield* B.promise(() => new Promise((r) => setTimeout(r, 10)));
 * ```
 * @throws the Promise's rejection reason, or what `fn` throws.
 * @throws Cancelled when the task is cancelled while waiting.
 */
export function promise<T>(fn: (signal: AbortSignal) => PromiseLike<T> | T): Operation<T> {
  return new PromiseOp(fn);
}

/**
 * An `AbortSignal` that aborts when `task` (by default the current one) is
 * cancelled, to hand to Promise-based APIs. The reason is a `Cancelled`.
 *
 * @example
 * ```ts
 * const signal = B.abortSignal();
 * setTimeout(onTick, 1000, { signal });
 * ```
 * @throws TypeError outside a task when no task is given.
 */
export function abortSignal(task?: Task<unknown>): AbortSignal {
  const target = task ?? currentTask("abortSignal()");
  const extra = target.getExtra();
  if (extra.abort === null) {
    extra.abort = new AbortController();
    if ((target.flags & F.CANCEL_REQUESTED) !== 0 || target.state === State.Cancelled) {
      extra.abort.abort(new Cancelled(`task ${target.uid} was cancelled`));
    }
  }
  return extra.abort.signal;
}
