// Scenario — `yield* B.yieldIfDue()` in a CPU loop: one task runs 1M
// iterations of a small computation (an FNV-style hash step) beside one
// other task, which must get its turns. Three ways to write the loop: never
// yielding (the floor: the other task waits for the whole loop), yielding
// every iteration (`yield* B.yieldNow()`: a trip through the run queue each
// time), and `yield* B.yieldIfDue()` every iteration (a clock read; a yield
// only when the loop's slice is spent). Time per iteration.

import { QUICK, runContenders } from "./harness.js";

export const SCENARIO = "CPU loop, 1M iterations";
const N = QUICK ? 200_000 : 1_000_000;

/** The loop's result for `n` iterations (each contender must return it). */
function hashOf(n) {
  let h = 0x811c9dc5;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ (i & 0xff), 0x01000193) >>> 0;
  return h;
}
const EXPECTED = new Map();
const expected = (n) => {
  if (!EXPECTED.has(n)) EXPECTED.set(n, hashOf(n));
  return EXPECTED.get(n);
};

function makeLoop(B, pause) {
  function* loop(n) {
    let h = 0x811c9dc5;
    for (let i = 0; i < n; i++) {
      h = Math.imul(h ^ (i & 0xff), 0x01000193) >>> 0;
      if (pause !== null) yield* pause();
    }
    return h;
  }
  function* other() {
    yield* B.yieldNow();
  }
  return (n) =>
    B.run(function* () {
      const beside = B.spawn(other);
      const h = yield* B.awaitExn(B.spawn(loop, n));
      yield* B.awaitExn(beside);
      return h;
    });
}

export function contenders({ B, bobbinError }) {
  const has = B && typeof B.yieldIfDue === "function";
  const error = bobbinError ?? (B && !has ? "@bobbin/core has no yieldIfDue (build it)" : undefined);
  return [
    { contender: "Bobbin, never yields", anchor: "async", n: N, fn: has ? makeLoop(B, null) : null, error },
    { contender: "Bobbin, yieldNow every iteration", n: N, fn: has ? makeLoop(B, B.yieldNow) : null, error },
    {
      contender: "Bobbin, yieldIfDue every iteration",
      n: N,
      fn: has ? makeLoop(B, B.yieldIfDue) : null,
      error,
      note: "the ratio columns: vs never yielding",
    },
  ];
}

export async function run(results, ctx) {
  await runContenders(results, contenders(ctx), { scenario: SCENARIO, expect: expected, interleave: { iters: 9, clock: "cpu" } });
}
