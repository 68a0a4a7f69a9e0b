import { expect } from "vitest";

// Expecting failures: the same helpers as the conformance suite's.
export { failure, thrown } from "../src/conformance/support.js";

/** Active handles of one kind. */
export function count(kind: string): number {
  return process.getActiveResourcesInfo().filter((k) => k === kind).length;
}

export function expectRange(value: number, min: number, max: number): void {
  expect(value).toBeGreaterThanOrEqual(min);
  expect(value).toBeLessThan(max);
}
