/**
 * Domains: Miou's parallel runtimes. Here the main thread is dom0; worker
 * threads (started by `call`/`parallel`) are the other domains.
 */
import { current } from "./scheduler.js";
import { currentTask } from "./scheduler.js";
import type { Task } from "./task.js";

/**
 * Identifies domains and tasks.
 *
 * @example
 * ```ts
 * B.Domain.self();   // 0 on the main thread
 * ```
 */
export const Domain = {
  /** The domain the caller runs on: 0 for the main thread. */
  self(): number {
    return current?.sched.domain ?? 0;
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
