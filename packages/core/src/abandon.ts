/**
 * `abandon`: settle a run whose tasks can never end — the seam a runtime
 * that knows its tasks are stuck for good (the simulator's world) ends its
 * run with, as core's own deadlock detection does (deadlock/drain.ts).
 */

import { describe } from "./describe.js";
import { Kernel } from "./kernel/kernel.js";
import { Task } from "./kernel/task.js";

/**
 * Settles the run `task` belongs to now, failing with `error` (after the
 * failures it had already): its events backend is finalised, its domains
 * stopped, and its tasks that have not ended are left where they wait,
 * never to run again — what their cleanup had left to do is not done. For a
 * runtime that knows nothing can end them: its tasks were cancelled and
 * still wait on what nothing will ever do (a simulated world with nothing
 * left to happen). Call it from outside the run (a callback of Node's loop).
 * Returns false, doing nothing, when the run is over already.
 *
 * @example
 * ```ts
 * let root: B.Task<unknown> | null = null;
 * const run = L.runKernel(function* () { root = B.self(); yield* main(); }, { events });
 * // later, once the runtime knows its cancelled tasks can never end:
 * setImmediate(() => L.abandon(root!, new Error("stuck in cleanup for good")));
 * await run;   // rejects with that error
 * ```
 * @throws TypeError when `task` is not a task, or when called from a task of
 * the run it would abandon (a run cannot settle under its own steps).
 */
export function abandon(task: Task<unknown>, error: unknown): boolean {
  if (!(task instanceof Task)) throw new TypeError(`abandon(task, error) expects a task, got ${describe(task)}`);
  const kernel = Kernel.of(task);
  if (kernel === null || kernel.life.done) return false;
  if (kernel.loop.isRunning) {
    throw new TypeError(
      "abandon(task, error) settles a run from outside it, and was called from one of its tasks: " +
        "call it from a callback of Node's loop (setImmediate), or end the task's run by failing its root",
    );
  }
  kernel.life.abandon(error);
  return true;
}
