/**
 * Running a body that may be a generator function (it can suspend, consumed
 * with `yield*`) or a plain function (it cannot), and telling the running
 * task's own cancellation from the errors the body throws. `Body` is public;
 * the helpers are internal.
 */
import { abortSignal, Cancelled, type Instruction, type Task } from "@bobbin/core";

/**
 * A body of `protect`/`withPermits`/`Lazy.fromFun`/`tryCapture`: a generator
 * function (its body may suspend) or a plain function (it may not).
 *
 * @example
 * ```ts
 * const critical: Body<[number], number> = function* (n) { yield* B.yieldNow(); return n + 1; };
 * ```
 */
export type Body<A extends unknown[], T> = ((...args: A) => Generator<Instruction, T, unknown>) | ((...args: A) => T);

/** @internal Whether `value` is a generator object (what a `function*` returns). */
export function isGenerator(value: unknown): value is Generator<Instruction, unknown, unknown> {
  return value !== null && typeof value === "object" && (value as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === "Generator";
}

/** @internal Calls `fn(...args)` and, when it is a generator function, runs the generator. */
export function* callBody<A extends unknown[], T>(fn: Body<A, T>, args: A): Generator<Instruction, T, unknown> {
  const result = args.length === 0 ? (fn as () => unknown)() : fn(...args);
  if (isGenerator(result)) return (yield* result) as T;
  return result as T;
}

/** @internal */
export function checkBody(fn: unknown, name: string): void {
  if (typeof fn !== "function") {
    throw new TypeError(
      `${name} expects a function (a generator function when the body must suspend), got ${fn === null ? "null" : typeof fn}`,
    );
  }
}

/**
 * @internal Whether `error`, thrown out of a body `task` ran, is that task's
 * own cancellation (rather than a `Cancelled` the body got from elsewhere,
 * e.g. a child's outcome).
 */
export function isCancellationOf(error: unknown, task: Task<unknown>): boolean {
  return error instanceof Cancelled && abortSignal(task).aborted;
}
