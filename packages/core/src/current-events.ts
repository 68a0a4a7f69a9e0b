/**
 * `currentEvents`: the events backend of the running task's domain, for the
 * packages that find their backend there. Apart from domain.ts so that a
 * program's declarations never reach `Events`.
 */
import type { Events } from "./events.js";
import { runningTask } from "./kernel/current.js";
import { runningKernel } from "./kernel/kernel.js";

/**
 * The events backend of the running task's domain; `null` when that domain
 * has none, or outside any task (packages such as `@bobbin/unix` find their
 * backend here in every domain). It never throws: code that is called both
 * from tasks and from elsewhere (a simulation's clock, say) asks it freely.
 *
 * @example
 * ```ts
 * const backend = L.currentEvents();   // the backend runKernel's `events` made for this domain
 * ```
 * @throws nothing
 */
export function currentEvents(): Events | null {
  return runningTask() === null ? null : runningKernel()!.events;
}
