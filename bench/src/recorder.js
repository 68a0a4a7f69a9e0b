// Scenario — what the flight recorder and the blocking-step watch cost:
// spawn-await.js's spawn + await of 100k children, with `run`'s
// `flightRecorder` (a ring of 4,096 events, which the kernel writes itself at
// each trace point: one store per step, one to three per spawn, park, wake,
// cancel and end, no call and no clock read of its own: it takes the loop's,
// every 64 steps at most as without it) and `blockingMs` (two clock reads per
// step), against the same program with neither, twice (an A/A: the row's
// noise), all in shared rounds with async/await, timed in CPU time (31 rounds
// of about 40 ms). The rows differ by a few percent, less than what another
// process's load or a collection does to one round, and those fall on a whole
// round: each Bobbin row is compared with "recorder off" round by round, and
// its ratio is the median of those per-round ratios (in 57 processes of these
// programs but the blocking watch's, at load 2-6.5, the standard deviation of
// an A/A's ratio was 0.031 this way, 0.050 as the ratio of the two medians).
// Off, the loop steps with `step` itself: the "off" row is spawn+await's
// Bobbin program. The target: on, ≤ 1.05× off.

import { fmtRatio, median, runContenders } from "./harness.js";
import { asyncParent, expected, makeBobbin, N } from "./spawn-await.js";

export const SCENARIO = "spawn+await, flight recorder";

export function contenders({ B, bobbinError }) {
  const has = B && typeof B.chromeTrace === "function";
  const error = bobbinError ?? (B && !has ? "@bobbin/core has no flight recorder (build it)" : undefined);
  const bobbin = (options) => (has ? makeBobbin(B, options) : null);
  const reported = (text) => ({ against: "off", max: Number.POSITIVE_INFINITY, text });
  return [
    { contender: "async/await", anchor: "async", n: N, fn: asyncParent },
    { contender: "Bobbin, recorder off", anchor: "off", n: N, fn: bobbin({}), error },
    { contender: "Bobbin, recorder off (A/A)", n: N, fn: bobbin({}), error, targetSpec: reported("reported: the row's noise") },
    {
      contender: "Bobbin, flightRecorder: 4096",
      n: N,
      fn: bobbin({ flightRecorder: 4096 }),
      error,
      targetSpec: {
        against: "off",
        max: Number.POSITIVE_INFINITY,
        // `paired` (set by `run`): the median of the per-round ratios to "recorder off".
        extra: (row) => row.paired <= 1.05,
        text: "≤ 1.05× recorder off, per round",
      },
    },
    {
      contender: "Bobbin, blockingMs: 100",
      n: N,
      fn: bobbin({ blockingMs: 100 }),
      error,
      targetSpec: reported("reported (vs recorder off)"),
    },
  ];
}

/**
 * Gives each row of the scenario whose target is against "recorder off" its
 * `paired` ratio to that row: the median of their per-round ratios (the rows
 * ran in the same rounds, so their samples pair up by index).
 */
export function pairWithOff(rows) {
  const off = rows.find((r) => r.scenario === SCENARIO && r.anchor === "off" && !r.error);
  if (off === undefined) return;
  for (const r of rows) {
    if (r.scenario !== SCENARIO || r.error || r.targetSpec?.against !== "off" || r.samples.length !== off.samples.length) continue;
    r.paired = median(r.samples.map((x, i) => x / off.samples[i]));
    r.note = `${fmtRatio(r.paired)} recorder off, the median of per-round ratios`;
  }
}

export async function run(results, ctx) {
  await runContenders(results, contenders(ctx), { scenario: SCENARIO, expect: expected, interleave: { iters: 31, clock: "cpu" } });
  pairWithOff(results.rows);
}
