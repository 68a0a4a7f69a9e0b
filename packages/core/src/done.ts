/**
 * `done`: an operation that completes at once, for operations' fast paths.
 * Apart from operation.ts so that a program's declarations (which name
 * `Operation`) never reach it.
 */
import { type Instruction, type Operation, SingleShot } from "./operation.js";

/**
 * An operation that completes at once with `value`, without suspending: what
 * a fast path returns where an operation is expected. `done()` (no value) is
 * one shared object.
 *
 * @example
 * ```ts
 * function read(): B.Operation<number> {
 *   return buffered > 0 ? L.done(takeBuffered()) : new ReadOp();
 * }
 * const n = yield* read();
 * ```
 * @throws never.
 */
export function done(): Operation<void> & Iterator<Instruction, void, unknown>;
export function done<T>(value: T): Operation<T> & Iterator<Instruction, T, unknown>;
export function done(value?: unknown): Operation<unknown> & Iterator<Instruction, unknown, unknown> {
  return value === undefined ? DONE_OP : new Done(value);
}

class Done<T> extends SingleShot<T> {
  constructor(private readonly value: T) {
    super();
  }

  next(): IteratorResult<Instruction, T> {
    return { done: true, value: this.value };
  }
}

const DONE_OP = new Done<unknown>(undefined);
