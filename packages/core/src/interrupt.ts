/**
 * `interrupt`: wake a suspended task with an error, without cancelling it —
 * the seam µthreads-style timeouts are built on.
 */

import { describe } from "./describe.js";
import { Kernel } from "./kernel/kernel.js";
import { Task } from "./kernel/task.js";

/**
 * Throws `error` into `task` at the suspension point it is parked on (a
 * trigger, a syscall, a Promise, an await…), as a cancellation would, but
 * without cancelling it: the task may catch the error and go on. A syscall
 * abandoned this way is reported to the events backend as cancelled. Returns
 * false, doing nothing, when the task is running, queued or has ended.
 *
 * @example
 * ```ts
 * const me = B.self();
 * const timer = setTimeout(() => L.interrupt(me, new Timeout()), 1000);
 * try { yield* readSomething(); } finally { clearTimeout(timer); }
 * ```
 * @throws TypeError when `task` is not a task.
 */
export function interrupt(task: Task<unknown>, error: unknown): boolean {
  if (!(task instanceof Task)) throw new TypeError(`interrupt(task, error) expects a task, got ${describe(task)}`);
  const kernel = Kernel.of(task);
  return kernel?.interrupt(task, error) === true;
}
