// Scenario — cancelling 1,000 parked tasks.
// A task starts N = 1,000 tasks that each park on a trigger nobody signals,
// waits until all of them are parked, and then cancels them all and waits
// until every one has ended (its cleanup has run). Only that cancellation is
// timed: from the moment it is asked for until the last task has ended.
//
// - the anchor: one parent of N parked children, stopped with one
//   `yield* B.cancel(parent)` (the cancellation reaches the whole subtree);
// - a group: N tasks spawned into `B.group`, stopped with `g.cancel()` (one
//   wave), timed until `yield* B.group(...)` returns;
// - for reference, one `yield* B.cancel(t)` per task, which is how a program
//   without groups stopped N jobs (each cancel waits for its task to end).
//
// Each run does ROUNDS rounds inside one `B.run`; a sample is the cancel time
// of all its rounds divided by ROUNDS × N (time per task cancelled). 2
// warm-up runs, 7 measured, median. The checksum is the number of tasks seen
// parked and then cancelled, which must be ROUNDS × N.

import { performance } from "node:perf_hooks";
import { gc, median, QUICK, runContenders } from "./harness.js";

export const SCENARIO = "cancel 1,000 parked tasks";
const N = 1000;
const ROUNDS = QUICK ? 10 : 50;

function makeBobbin(B, L) {
  let parked = 0;
  let cancelled = 0;

  function* park() {
    parked++;
    try {
      yield* new L.Trigger().wait();
    } finally {
      cancelled++;
    }
  }

  function* untilParked(target) {
    while (parked < target) yield* B.yieldNow();
  }

  function* parent() {
    for (let i = 0; i < N; i++) B.spawn(park);
    yield* new L.Trigger().wait();
  }

  /** One parent of N children: one cancel. */
  function* viaParent() {
    const target = parked + N;
    const p = B.spawn(parent);
    yield* untilParked(target);
    const t0 = performance.now();
    yield* B.cancel(p);
    return performance.now() - t0;
  }

  /** N tasks of a group: one g.cancel() wave. */
  function* viaGroup() {
    const target = parked + N;
    let t0 = 0;
    yield* B.group(function* (g) {
      for (let i = 0; i < N; i++) g.spawn(park);
      yield* untilParked(target);
      t0 = performance.now();
      g.cancel();
    });
    return performance.now() - t0;
  }

  /** N children cancelled one at a time. */
  function* oneByOne() {
    const target = parked + N;
    const tasks = new Array(N);
    for (let i = 0; i < N; i++) tasks[i] = B.spawn(park);
    yield* untilParked(target);
    const t0 = performance.now();
    for (let i = 0; i < N; i++) yield* B.cancel(tasks[i]);
    return performance.now() - t0;
  }

  /** Runs `rounds` rounds of `how`; resolves to [cancel time in ms, tasks seen parked and cancelled]. */
  const rounds = (how) => async (n) => {
    parked = 0;
    cancelled = 0;
    const ms = await B.run(function* () {
      let total = 0;
      for (let r = 0; r < n; r++) total += yield* how();
      return total;
    });
    return [ms, Math.min(parked, cancelled)];
  };
  return { viaParent: rounds(viaParent), viaGroup: rounds(viaGroup), oneByOne: rounds(oneByOne) };
}

async function measureCancel(fn) {
  const samples = [];
  gc();
  for (let i = 0; i < 2 + 7; i++) {
    const [ms, checked] = await fn(ROUNDS);
    if (checked !== ROUNDS * N) throw new Error(`expected ${ROUNDS * N} tasks parked then cancelled, saw ${checked}`);
    if (i >= 2) samples.push((ms * 1e6) / (ROUNDS * N));
  }
  return { perOp: median(samples), samples };
}

export function contenders({ B, L, bobbinError }) {
  const hasGroups = B && typeof B.group === "function";
  const make = hasGroups ? makeBobbin(B, L) : null;
  const error = bobbinError ?? (B && !hasGroups ? "@bobbin/core has no B.group (build it)" : undefined);
  return [
    { contender: "Bobbin, one parent: yield* B.cancel(parent)", anchor: "async", n: N, fn: make?.viaParent, error },
    {
      contender: "Bobbin, a group: g.cancel()",
      n: N,
      fn: make?.viaGroup,
      error,
      targetSpec: { against: "async", max: 5, text: "≤ 5× one parent" },
    },
    { contender: "Bobbin, one yield* B.cancel(t) per task (reference)", n: N, fn: make?.oneByOne, error },
  ];
}

export async function run(results, ctx) {
  await runContenders(results, contenders(ctx), { scenario: SCENARIO, measureOne: (c) => measureCancel(c.fn) });
}
