import { expect } from "vitest";

// Expecting failures, a connected pair: the same helpers as the conformance suite's.
export { connectedPair, failure, thrown } from "../src/conformance/support.js";

/** Active handles of one kind. */
export function count(kind: string): number {
  return process.getActiveResourcesInfo().filter((k) => k === kind).length;
}

export function expectRange(value: number, min: number, max: number): void {
  expect(value).toBeGreaterThanOrEqual(min);
  expect(value).toBeLessThan(max);
}

/** How many listeners `emitter` has for each event it has listeners for. */
export function listenerCounts(emitter: NodeJS.EventEmitter): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of emitter.eventNames()) counts[String(name)] = emitter.listenerCount(name);
  return counts;
}
