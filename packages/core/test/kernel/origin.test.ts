/** How a run keeps the errors it fails with: each failure once, a copy from another domain included. */
import { describe, expect, it } from "vitest";
import { decodeError, encodeError } from "../../src/domains/wire.js";
import { sameFailure } from "../../src/kernel/origin.js";

/** Errors alike in class, message and stack: made on one line, one per call. */
function alike(): Error {
  return new Error("boom");
}

describe("one failure, however many ways it reached the run", () => {
  it("an error and the copies of it that crossed domains are one failure, whichever way each went", () => {
    const error = alike();
    const wire = encodeError(error);
    const first = decodeError(wire);
    const second = decodeError(structuredClone(wire));
    expect(sameFailure(error, error)).toBe(true);
    expect(sameFailure(first, second)).toBe(true);
    // It crosses back: the copy of a copy is still that failure.
    expect(sameFailure(first, decodeError(encodeError(second)))).toBe(true);
    expect(sameFailure(error, decodeError(encodeError(error)))).toBe(true);
  });

  it("two errors alike in every text are two failures, in this domain or after crossing", () => {
    const [a, b] = [0, 1].map(alike) as [Error, Error]; // one call site: the same stack
    expect([a.name, a.message, a.stack]).toEqual([b.name, b.message, b.stack]);
    expect(sameFailure(a, b)).toBe(false);
    const [ca, cb] = [decodeError(encodeError(a)), decodeError(encodeError(b))];
    expect(sameFailure(ca, cb)).toBe(false);
  });
});
