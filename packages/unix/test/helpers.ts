import { expect } from "vitest";

// A connected pair, as the conformance suite makes it (what the workspace's tests share is @bobbin/test-support's).
export { connectedPair } from "../src/conformance/support.js";

export function expectRange(value: number, min: number, max: number): void {
  expect(value).toBeGreaterThanOrEqual(min);
  expect(value).toBeLessThan(max);
}
