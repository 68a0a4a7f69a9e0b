// Scenario — what the flight recorder and the blocking-step watch cost:
// spawn-await.js's spawn + await of 100k children, with `run`'s
// `flightRecorder` (a ring of 4,096 events, which the kernel writes itself at
// each trace point: one store per step, one to three per spawn, park, wake,
// cancel and end, no call and no clock read of its own: it takes the loop's,
// every 64 steps at most as without it) and `blockingMs` (two clock reads per
// step), against the same program with neither, all in shared rounds with
// async/await, timed in CPU time (31 rounds of about 40 ms: the rows differ
// by a few percent, less than what another process's load or a collection
// does to one round). Off, the loop steps with `step` itself: the "off" row
// is spawn+await's Bobbin program. The target: on, ≤ 1.05× off.

import { runContenders } from "./harness.js";
import { asyncParent, expected, makeBobbin, N } from "./spawn-await.js";

export const SCENARIO = "spawn+await, flight recorder";

export function contenders({ B, bobbinError }) {
  const has = B && typeof B.chromeTrace === "function";
  const error = bobbinError ?? (B && !has ? "@bobbin/core has no flight recorder (build it)" : undefined);
  const bobbin = (options) => (has ? makeBobbin(B, options) : null);
  return [
    { contender: "async/await", anchor: "async", n: N, fn: asyncParent },
    { contender: "Bobbin, recorder off", anchor: "off", n: N, fn: bobbin({}), error },
    {
      contender: "Bobbin, flightRecorder: 4096",
      n: N,
      fn: bobbin({ flightRecorder: 4096 }),
      error,
      targetSpec: { against: "off", max: 1.05, text: "≤ 1.05× recorder off" },
    },
    {
      contender: "Bobbin, blockingMs: 100",
      n: N,
      fn: bobbin({ blockingMs: 100 }),
      error,
      targetSpec: { against: "off", max: Number.POSITIVE_INFINITY, text: "reported (vs recorder off)" },
    },
  ];
}

export async function run(results, ctx) {
  await runContenders(results, contenders(ctx), { scenario: SCENARIO, expect: expected, interleave: { iters: 31, clock: "cpu" } });
}
