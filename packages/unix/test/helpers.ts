import type * as B from "@bobbin/core";
import { expect } from "vitest";

/** Runs `op` and returns what it threw (fails the test when it does not throw). */
export function* failure(op: () => B.Operation<unknown>): Generator<B.Instruction, unknown, unknown> {
  try {
    yield* op();
  } catch (error) {
    return error;
  }
  throw new Error("expected the operation to fail");
}

/** Calls `fn` and returns what it threw synchronously. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a synchronous error");
}

/** Active handles of one kind. */
export function count(kind: string): number {
  return process.getActiveResourcesInfo().filter((k) => k === kind).length;
}

export function expectRange(value: number, min: number, max: number): void {
  expect(value).toBeGreaterThanOrEqual(min);
  expect(value).toBeLessThan(max);
}
