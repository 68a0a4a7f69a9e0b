/**
 * Domains: Miou's parallel runtimes. Here the main thread is dom0; worker
 * threads (started by `call`/`parallel`) are the other domains.
 */

import { currentTask, runningTask } from "./kernel/current.js";
import { kernelOf, runningKernel } from "./kernel/kernel.js";
import type { Task } from "./kernel/task.js";

/**
 * Domains of the current run.
 *
 * @example
 * ```ts
 * B.Domain.self();        // 0 on the main thread
 * B.Domain.available();   // worker domains, e.g. 1 on a 2-core machine
 * B.Domain.all();         // [1]: the domains call({ pin }) accepts
 * ```
 */
export const Domain = {
  /** The domain the caller runs on: 0 for the main thread, 1… for worker domains. */
  self(): number {
    const task = runningTask();
    return task !== null ? runningKernel()!.domainOf(task) : 0;
  },
  /**
   * How many worker domains the current run may use for parallel tasks (dom0 excluded).
   * @throws TypeError outside a task.
   */
  available(): number {
    return kernelOf("Domain.available()").workers;
  },
  /**
   * The worker domains of the current run, `[1, …, available()]` (as Miou's
   * `Domain.all`: dom0 is not among them, since it never runs parallel tasks).
   * @throws TypeError outside a task.
   */
  all(): number[] {
    const n = kernelOf("Domain.all()").workers;
    return Array.from({ length: n }, (_, i) => i + 1);
  },
};

/**
 * The task that is running (Miou's `self`). `caller` names the operation in
 * the error thrown outside a task: packages built on core pass their own
 * (`self("Mutex.lock()")`), so the message names what the program called.
 *
 * @example
 * ```ts
 * console.log(`${B.self()} on domain ${B.Domain.self()}`);   // "main#1 on domain 0"
 * const task = B.self("Queue.push()");   // outside a task: "Queue.push() must be called from inside a task…"
 * ```
 * @throws TypeError outside a task.
 */
export function self(caller = "self()"): Task<unknown> {
  return currentTask(caller);
}
