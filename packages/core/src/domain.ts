/**
 * Domains: Miou's parallel runtimes. Here the main thread is dom0; worker
 * threads (started by `call`/`parallel`) are the other domains.
 */

import type { Events } from "./events.js";
import { current, currentTask } from "./scheduler.js";
import type { Task } from "./task.js";

/**
 * Domains of the current run.
 *
 * @example
 * ```ts
 * B.Domain.self();        // 0 on the main thread
 * B.Domain.available();   // worker domains, e.g. 1 on a 2-core machine
 * B.Domain.all();         // [0, 1]
 * ```
 */
export const Domain = {
  /** The domain the caller runs on: 0 for the main thread, 1… for worker domains. */
  self(): number {
    return current?.sched.domain ?? 0;
  },
  /**
   * How many worker domains the current run may use for parallel tasks (dom0 excluded).
   * @throws TypeError outside a task.
   */
  available(): number {
    return currentTask("Domain.available()").sched.workers;
  },
  /**
   * The events backend of the current domain, or `null` when it has none
   * (packages such as `@bobbin/unix` find their backend here in every domain).
   * @throws TypeError outside a task.
   */
  events(): Events | null {
    return currentTask("Domain.events()").sched.events;
  },
  /**
   * Every domain of the current run: `[0, 1, …, available()]`.
   * @throws TypeError outside a task.
   */
  all(): number[] {
    const n = currentTask("Domain.all()").sched.workers;
    return Array.from({ length: n + 1 }, (_, i) => i);
  },
};

/**
 * The task that is running (Miou's `self`).
 *
 * @example
 * ```ts
 * console.log(`task ${B.self().uid} on domain ${B.Domain.self()}`);
 * ```
 * @throws TypeError outside a task.
 */
export function self(): Task<unknown> {
  return currentTask("self()");
}
