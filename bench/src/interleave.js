// Interleaved rounds: every contender of a scenario runs once per round (the
// order rotating), so that a burst of load from another process falls on all of
// them rather than on one row; medians per contender. Used where contenders are
// compared in one process: the whole programs (programs.js) and the channel
// operations (channel-ops.js).

import { performance } from "node:perf_hooks";
import { gc, median, withTimeout } from "./harness.js";

/**
 * Runs `contenders` ({ contender, n, fn }) in `warmup` + `rounds` interleaved
 * rounds; `fn(n)` must return `expected(n)`. With `collect`, a full `gc()`
 * runs before every run. Returns, per contender, its samples (ns per unit of
 * `n`) and median, or the error that stopped it.
 */
export async function interleave(contenders, { warmup = 2, rounds = 7, collect = false, expected, label = "" }) {
  const live = contenders.filter((c) => c.fn && !c.error);
  const samples = new Map(live.map((c) => [c, []]));
  const failed = new Map();
  for (let round = 0; round < warmup + rounds; round++) {
    for (let k = 0; k < live.length; k++) {
      const c = live[(round + k) % live.length];
      if (failed.has(c)) continue;
      if (collect) gc();
      try {
        const t0 = performance.now();
        const answer = await withTimeout(Promise.resolve(c.fn(c.n)), 300_000, `${label} ${c.contender}`);
        const t1 = performance.now();
        const want = expected(c.n);
        if (answer !== want) throw new Error(`wrong answer ${String(answer)} (expected ${want})`);
        if (round >= warmup) samples.get(c).push(((t1 - t0) * 1e6) / c.n);
      } catch (e) {
        failed.set(c, e?.message ?? String(e));
      }
    }
  }
  return new Map(
    contenders.map((c) => {
      const error = c.error ?? (c.fn ? failed.get(c) : "not available");
      return [c, error ? { error } : { perOp: median(samples.get(c)), samples: samples.get(c) }];
    }),
  );
}
