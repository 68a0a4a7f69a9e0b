// Parallel tasks of the Domains benchmarks (bench/src/domains.js).
//
// Worker domains import this module to find the tasks again (core's defineTask), so its
// top level only defines things: no I/O, no timers, no run. Keep it that way.

import * as B from "@bobbin/core";

/**
 * A fixed amount of CPU work: `iterations` rounds of an FNV-1a-style hash over
 * the loop counter. Returns the hash, so the work cannot be skipped and each
 * result can be checked against the same function run on dom0.
 */
export function spinLoop(iterations) {
  let h = 0x811c9dc5 ^ iterations;
  for (let i = 0; i < iterations; i++) {
    h ^= i & 0xff;
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

/** Returns its argument: a `call` round trip and nothing else. */
export const echo = B.defineTask(import.meta.url, "echo", function* (x) {
  return x;
});

/** CPU-bound: `spinLoop(iterations)` on the domain that runs it. */
export const spin = B.defineTask(import.meta.url, "spin", function* (iterations) {
  return spinLoop(iterations);
});

/** As `spin`, and says which domain ran it: `[hash, domain]` (the skew scenario checks where work went). */
export const spinWhere = B.defineTask(import.meta.url, "spinWhere", function* (iterations) {
  return [spinLoop(iterations), B.Domain.self()];
});
