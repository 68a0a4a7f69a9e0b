/**
 * `spawnSystem`: tasks that serve the whole run. Apart from spawn.ts so that
 * a program's declarations (which name `spawn`) never reach it.
 */
import { currentTask } from "./kernel/current.js";
import { kernelOf } from "./kernel/kernel.js";
import type { Task } from "./kernel/task.js";
import type { TaskBody } from "./operation.js";
import { startFiber } from "./spawn.js";

/**
 * Spawns a system task on the current domain (Trio's `spawn_system_task`):
 * a task with no parent, beside the run's root task rather than under it,
 * for packages that serve the whole run (`@bobbin/unix` runs its signal
 * handlers under one). Nobody awaits or cancels it: if it fails, the run
 * fails with its error (the root is cancelled); when the root has ended, the
 * system tasks still running are cancelled, and the run settles once they
 * have ended too. The tracer hears of its `start` and `end`, not of a `spawn`
 * (it has no parent).
 *
 * @example
 * ```ts
 * const trigger = new L.Trigger();
 * L.spawnSystem(function* () {
 *   yield* trigger.wait();          // woken from a Node callback: trigger.signal()
 *   yield* handle();
 * });
 * ```
 * @throws TypeError outside a task, or when `fn` is not a task body (`B.TaskBody`).
 */
export function spawnSystem<A extends unknown[], T>(fn: TaskBody<A, T>, ...args: A): Task<T> {
  currentTask("spawnSystem()");
  return kernelOf("spawnSystem()").life.startSystem(startFiber(fn, args, "spawnSystem")) as Task<T>;
}
