/**
 * `checkTimeouts`: how an operation that waits obeys `withTimeout` when it
 * starts inside a scope whose deadline passed already.
 */
import { expiredTimeout } from "../timeout.js";

/**
 * For backends: throws the expired timeout of the current task, if any. Call
 * it when an operation starts (the `Parked` base class does), so that I/O
 * started inside an expired `withTimeout` scope fails at once.
 *
 * @example
 * ```ts
 * next(resumed) { if (resumed === undefined) checkTimeouts(); … }
 * ```
 * @throws Timeout when the current task is inside a `withTimeout` scope whose deadline passed.
 */
export function checkTimeouts(): void {
  const expired = expiredTimeout();
  if (expired !== null) throw expired;
}
