/**
 * Interop with Promises and AbortSignals, for tasks living among JS libraries.
 */

import { describe } from "./describe.js";
import { Cancelled } from "./errors.js";
import { currentTask } from "./kernel/current.js";
import { type Kernel, runningKernel } from "./kernel/kernel.js";
import { isCancelRequested, wasCancelled } from "./kernel/state.js";
import { Task, type Waiter } from "./kernel/task.js";
import { familyOf } from "./kernel/tree.js";
import { type Instruction, type Operation, RESUMED, SingleShot, SUSPENDED } from "./operation.js";

class PromiseOp<T> extends SingleShot<T> implements Waiter {
  private task: Task | null = null;
  private kernel: Kernel | null = null;
  private controller: AbortController | null = null;
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
    if (typeof this.fn !== "function") throw new TypeError(`promise(fn) expects a function (signal) => Promise, got ${describe(this.fn)}`);
    const controller = new AbortController();
    const pending = this.fn(controller.signal);
    const k = runningKernel()!;
    this.task = task;
    this.kernel = k;
    this.controller = controller;
    k.park(task, this);
    Promise.resolve(pending).then(
      (value) => this.settle(false, value),
      (error: unknown) => this.settle(true, error),
    );
    return SUSPENDED;
  }

  private settle(failed: boolean, value: unknown): void {
    const task = this.task;
    if (task === null) return;
    this.task = null;
    this.failed = failed;
    this.value = value;
    this.kernel!.wake(task, RESUMED);
  }

  detach(): void {
    this.task = null;
    this.controller!.abort(new DOMException("the task was cancelled", "AbortError"));
  }

  describe(): string {
    return `promise ${this.fn.name || "(anonymous)"}`;
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
 * @throws TypeError when `fn` is not a function.
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
 * @throws TypeError outside a task when no task is given, or when `task` is not a task.
 */
export function abortSignal(task?: Task<unknown>): AbortSignal {
  if (task !== undefined && !(task instanceof Task))
    throw new TypeError(`abortSignal(task) expects a task made by B.spawn or B.call, got ${describe(task)}`);
  const target = task ?? currentTask("abortSignal()");
  const family = familyOf(target);
  if (family.abort === null) {
    family.abort = new AbortController();
    if (isCancelRequested(target) || wasCancelled(target)) {
      family.abort.abort(new Cancelled(`${target} was cancelled`));
    }
  }
  return family.abort.signal;
}
