/**
 * `run`: a program starts a kernel on this thread (dom0) with a root task.
 */
import type { TaskBody } from "./operation.js";
import { startRun } from "./run-kernel.js";
import type { RunOptions } from "./run-options.js";

/**
 * Runs `main` as the root task of a new kernel on this thread (dom0) and
 * settles with its value or error once it and its whole task tree have ended,
 * and every worker domain it started has stopped. It always settles: a bug
 * in code the kernel calls (a handler, a hook, a backend) fails it with
 * `CallbackFailed`, a bug in the kernel itself with `InternalError`.
 *
 * @example
 * ```ts
 * const n = await B.run(function* () {
 *   const child = B.spawn(function* () { return 21 * 2; });
 *   return yield* B.awaitExn(child);
 * });   // 42
 * ```
 * @throws (rejects with) the root task's error; `StillHasChildren`,
 * `ResourceLeaked` when a rule is broken anywhere in the tree; `Deadlock`
 * when every task waits and nothing can wake them; `CallbackFailed`,
 * `DomainUnresponsive`, `InternalError`; the signal's reason.
 * @throws TypeError / RangeError for an invalid `main` or options (synchronously).
 */
export function run<T>(main: TaskBody<[], T>, options: RunOptions = {}): Promise<T> {
  return startRun("run", main, options, false);
}
