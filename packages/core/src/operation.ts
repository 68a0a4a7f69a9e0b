/**
 * The protocol between fibers and the scheduler.
 *
 * A fiber is a generator. It hands the scheduler an {@link Instruction} by
 * `yield*`-ing an {@link Operation}; the operation's iterator does its work
 * synchronously in `next()` and either completes at once (`done: true`) or
 * yields `SUSPEND` (the task is parked until someone resumes it) or `YIELD`
 * (back of the run queue). The scheduler resumes a parked fiber with
 * `next(value)`, where `value` is never `undefined` (void resumptions pass
 * {@link RESUMED}), so an operation tells its first call (always `undefined`,
 * from `yield*`) from its resumption without keeping state. That is what lets
 * hot operations be preallocated singletons.
 */

declare const instructionBrand: unique symbol;

/**
 * What a fiber yields to the scheduler. Opaque: produce them only with `yield*` on an operation.
 *
 * @example
 * ```ts
 * function* worker(n: number): Generator<B.Instruction, number, unknown> {
 *   yield* B.yieldNow();
 *   return n * 2;
 * }
 * ```
 */
export type Instruction = { readonly [instructionBrand]: "Instruction" };

/**
 * Something that can suspend the current task: use it with `yield*`, which
 * evaluates to `T`. Forgetting the `yield*` leaves an `Operation<T>` where a
 * `T` was expected, a type error.
 *
 * @example
 * ```ts
 * const op: B.Operation<number> = B.awaitExn(child);
 * const n: number = yield* op;
 * ```
 */
export interface Operation<T> {
  [Symbol.iterator](): Iterator<Instruction, T, unknown>;
}

/**
 * The body of a task: a function that returns the operation the task runs —
 * a generator function (`function*`, whose `yield*`s are operations), or a
 * function returning any operation. Never an `async` function.
 *
 * @example
 * ```ts
 * const body: B.TaskBody<[number], number> = function* (n) { yield* B.yieldNow(); return n * 2; };
 * const later: B.TaskBody<[], void> = () => B.yieldNow();
 * ```
 */
export type TaskBody<A extends unknown[], T> = (...args: A) => Operation<T>;

/** @internal */ export const SUSPEND = { kind: "suspend" } as unknown as Instruction;
/** @internal */ export const YIELD = { kind: "yield" } as unknown as Instruction;
/** @internal The resumption value of operations that produce nothing. */
export const RESUMED = Symbol("resumed");

/** @internal */ export const SUSPENDED: IteratorYieldResult<Instruction> = { done: false, value: SUSPEND };
/** @internal */ export const YIELDED: IteratorYieldResult<Instruction> = { done: false, value: YIELD };
/** @internal */ export const DONE_VOID: IteratorReturnResult<void> = { done: true, value: undefined };

/**
 * @internal
 * Base of hand-written operations: its own iterator, with `throw` rethrowing so
 * that a cancellation delivered with `iterator.throw` travels through `yield*`
 * (without `throw`, `yield*` would close the iterator and raise a TypeError).
 */
export abstract class SingleShot<T> implements Operation<T>, Iterator<Instruction, T, unknown> {
  [Symbol.iterator](): this {
    return this;
  }

  abstract next(resumed?: unknown): IteratorResult<Instruction, T>;

  throw(error: unknown): IteratorResult<Instruction, T> {
    throw error;
  }

  return(value?: T): IteratorResult<Instruction, T> {
    return { done: true, value: value as T };
  }
}
