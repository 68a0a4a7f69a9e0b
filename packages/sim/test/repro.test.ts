/**
 * Reproduction lines (`seed=123 policy=pct depth=3 steps=412`): a line is
 * read strictly — each field once, each value in the form `repro` writes —
 * and anything else is a TypeError that names the field and the rule.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { POLICY_NAMES } from "../src/policy.js";
import { formatRepro, parseRepro, type Repro } from "../src/repro.js";

describe("parseRepro", () => {
  it("reads back every line formatRepro writes", () => {
    const repro: fc.Arbitrary<Repro> = fc.record(
      {
        seed: fc.maxSafeInteger(),
        policy: fc.constantFrom(...POLICY_NAMES),
        depth: fc.integer({ min: 1, max: 2 ** 31 }),
        steps: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        limit: fc.double({ min: Number.MIN_VALUE, noNaN: true, noDefaultInfinity: true }),
        domains: fc.integer({ min: 0, max: 1024 }),
      },
      { requiredKeys: ["seed", "policy"], noNullPrototype: true },
    );
    fc.assert(
      fc.property(repro, (r) => {
        expect(parseRepro(formatRepro(r))).toEqual({ depth: undefined, steps: undefined, limit: undefined, domains: undefined, ...r });
      }),
    );
  });

  it.each([
    ["an empty seed", "seed= policy=fifo", /its seed is missing or not an integer/],
    ["a hexadecimal seed", "seed=0x10 policy=fifo", /its seed is missing or not an integer/],
    ["a seed in exponent form", "seed=1e3 policy=fifo", /its seed is missing or not an integer/],
    ["a seed past the safe integers", "seed=9007199254740993 policy=fifo", /its seed is missing or not an integer/],
    ["a field given twice", "seed=1 seed=2 policy=fifo", /"seed" is given twice/],
    ["an empty depth", "seed=1 policy=pct depth= steps=3", /depth must be an integer ≥ 1/],
    ["a fractional depth", "seed=1 policy=pct depth=1.5 steps=3", /depth must be an integer ≥ 1/],
    ["a negative number of steps", "seed=1 policy=pct depth=1 steps=-3", /steps must be an integer ≥ 1/],
    ["a fractional number of domains", "seed=1 policy=fifo domains=0.5", /domains must be an integer from 0 to 1024/],
    ["more domains than a run takes", "seed=1 policy=fifo domains=2000", /domains must be an integer from 0 to 1024/],
    ["a limit of zero", "seed=1 policy=fifo limit=0", /limit must be a number of virtual seconds > 0/],
    ["a negative limit", "seed=1 policy=fifo limit=-5", /limit must be a number of virtual seconds > 0/],
    ["an infinite limit", "seed=1 policy=fifo limit=Infinity", /limit must be a number of virtual seconds > 0/],
    ["an inherited key as a field", "seed=1 policy=fifo __proto__=1", /"__proto__=1" is not one of its fields/],
    ["an inherited key as a policy", "seed=1 policy=constructor", /policy must be one of fifo, random, pct/],
    ["an empty line", "", /"" is not one of its fields/],
  ])("refuses %s with a TypeError that says why", (_, line, why) => {
    expect(() => parseRepro(line)).toThrow(TypeError);
    expect(() => parseRepro(line)).toThrow(why);
  });
});
