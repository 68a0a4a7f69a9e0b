// Scenario — what the flight recorder and the blocking-step watch cost:
// spawn-await.js's spawn + await of 100k children, with `run`'s
// `flightRecorder` (a ring of 4,096 events, which the kernel writes itself at
// each trace point: one store per step, one to three per spawn, park, wake,
// cancel and end, no call and no clock read of its own: it takes the loop's,
// every 64 steps at most as without it) and `blockingMs` (two clock reads per
// step), against the same program with neither, twice (an A/A: the row's
// noise), all in shared rounds with async/await, timed in CPU time (31 rounds
// of about 40 ms, in each of seven processes: see PROCESSES). The rows differ by a few percent, less than what another
// process's load or a collection does to one round, and those fall on a whole
// round: each Bobbin row is compared with "recorder off" round by round, and
// its ratio is the median of those per-round ratios (in 57 processes of these
// programs but the blocking watch's, at load 2-6.5, the standard deviation of
// an A/A's ratio was 0.031 this way, 0.050 as the ratio of the two medians).
// On or off, the loop steps the same way (on, it stores each step's run event
// first): the "off" row is spawn+await's Bobbin program. The target: on,
// ≤ 1.05× off.

import { fileURLToPath } from "node:url";
import { childJson, errorMessage, fmtRatio, loadBobbin, median, medianRatio, QUICK, Results, runContenders } from "./harness.js";
import { asyncParent, expected, makeBobbin, N } from "./spawn-await.js";

/**
 * The scenario runs in this many processes of its own, one after the other,
 * and its rows pool their rounds: how V8 compiled one process's code moves
 * the recorder's row by more than the recorder costs (the same build read
 * 1.01–1.13× in seven full runs, its A/A 0.97–1.00×), and a process's own
 * rounds all share that. Three processes still read 1.01–1.09× from one full
 * run to the next (five runs on one machine, one build but for the loop's
 * step, A/A 0.97–1.02×); seven narrow by about a third the spread that each
 * process's draw leaves in the median (a process takes about 7 s).
 */
const PROCESSES = QUICK ? 1 : 7;
export const INTERLEAVE = { iters: 31, clock: "cpu" };

export const SCENARIO = "spawn+await, flight recorder";
export { expected };

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
    r.paired = medianRatio(r.samples, off.samples);
    r.note = `${fmtRatio(r.paired)} recorder off, the median of per-round ratios`;
  }
}

/**
 * Pools the rows of the scenario's processes: each row's rounds one process
 * after the other (every row of a process ran in the same rounds, so rounds
 * still pair up by index across rows), its time the median of them all; a
 * row that failed in any process keeps that process's error.
 */
export function pooled(runs) {
  return runs[0].map((first, i) => {
    const mine = runs.map((rows) => rows[i]);
    const failed = mine.find((r) => r.error);
    if (failed) return { ...first, error: failed.error };
    const samples = mine.flatMap((r) => r.samples);
    return { ...first, samples, perOp: median(samples) };
  });
}

export async function run(results, ctx) {
  if (ctx.bobbinError) {
    await runContenders(results, contenders(ctx), { scenario: SCENARIO, expect: expected, interleave: INTERLEAVE });
    return;
  }
  const script = fileURLToPath(import.meta.url);
  const args = ["--expose-gc", script, "--rounds-only", ...(QUICK ? ["--quick"] : [])];
  const runs = [];
  try {
    for (let p = 0; p < PROCESSES; p++) runs.push(await childJson(args, { timeoutMs: 300_000 }));
  } catch (e) {
    for (const c of contenders(ctx))
      results.add({ scenario: SCENARIO, contender: c.contender, anchor: c.anchor, n: c.n, kind: "time", error: errorMessage(e) });
    return;
  }
  for (const row of pooled(runs)) {
    const c = contenders(ctx).find((x) => x.contender === row.contender);
    results.add({ ...row, targetSpec: c?.targetSpec });
  }
  pairWithOff(results.rows);
  for (const r of results.rows)
    if (r.scenario === SCENARIO && r.paired !== undefined) r.note += ` (${PROCESSES} processes × ${INTERLEAVE.iters} rounds)`;
}

// A process of the scenario (`--rounds-only`): its rows, with every round's time, as one line of JSON.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--rounds-only")) {
  const { B, L, error } = await loadBobbin();
  const results = new Results();
  await runContenders(results, contenders({ B, L, bobbinError: error }), { scenario: SCENARIO, expect: expected, interleave: INTERLEAVE });
  const rows = results.rows.map(({ scenario, contender, anchor, n, kind, note, perOp, samples, error: e }) => ({
    scenario,
    contender,
    anchor,
    n,
    kind,
    note,
    perOp,
    samples,
    error: e,
  }));
  console.log(JSON.stringify(rows));
}
