/**
 * `sleep` (Miou_unix's `sleep`): park the task in the backend's deadline heap.
 */
import type * as B from "@bobbin/core";
import { describe } from "@bobbin/core/lowlevel";
import { currentBackend } from "./context.js";
import { operationFrom } from "./from-backend.js";

/**
 * Suspends the current task for `seconds` (fractions allowed; `0` lets every
 * other ready task run first; `Infinity` sleeps until cancelled). Never
 * returns early. A cancelled sleeper leaves the deadline heap at once.
 *
 * @example
 * ```ts
 * yield* sleep(0.25);
 * const a = B.spawn(function* () { yield* sleep(1); });
 * const b = B.spawn(function* () { yield* sleep(2); });
 * yield* B.awaitAll([a, b]);            // ≈ 2 s, not 3
 * ```
 * @throws RangeError when `seconds` is negative or not a number.
 * @throws TypeError outside a task of `@bobbin/unix`'s `run`, or in a worker domain with no backend (see `defineBackend`).
 * @throws Cancelled when the task is cancelled while sleeping; Timeout inside an expired `withTimeout`.
 */
export function sleep(seconds: number): B.Operation<void> {
  if (typeof seconds !== "number" || Number.isNaN(seconds) || seconds < 0) {
    throw new RangeError(`sleep(seconds): seconds must be a number ≥ 0, got ${describe(seconds)}`);
  }
  const backend = currentBackend("sleep()");
  return operationFrom(backend.sleep(seconds * 1000), backend, "sleep");
}
