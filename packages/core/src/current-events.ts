/**
 * `currentEvents`: the events backend of the running task's domain, for the
 * packages that find their backend there. Apart from domain.ts so that a
 * program's declarations never reach `Events`.
 */
import type { Events } from "./events.js";
import { kernelOf } from "./kernel/kernel.js";

/**
 * The events backend of the current domain, or `null` when it has none
 * (packages such as `@bobbin/unix` find their backend here in every domain).
 *
 * @example
 * ```ts
 * const backend = L.currentEvents();   // the backend runKernel's `events` made for this domain
 * ```
 * @throws TypeError outside a task.
 */
export function currentEvents(): Events | null {
  return kernelOf("currentEvents()").events;
}
