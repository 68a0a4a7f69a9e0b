// Scenario 1 — spawn + await of 100k children.
// A parent starts N children (each returns its index), then awaits them all, in order.
// Reported: time per child (spawn + run + await).

import * as E3 from "effect3";
import * as E4 from "effect4";
import * as Effection from "effection";
import { QUICK, runContenders } from "./harness.js";

export const SCENARIO = "spawn+await";
export const N = QUICK ? 20_000 : 100_000;
export const expected = (n) => (n * (n - 1)) / 2;

// --- async/await: async functions + awaiting their promises --------------------
async function asyncChild(i) {
  return i;
}
export async function asyncParent(n) {
  const ps = new Array(n);
  for (let i = 0; i < n; i++) ps[i] = asyncChild(i);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += await ps[i];
  return sum;
}

// --- Effection 4: spawn + yield* task ----------------------------------------
// Effection's spawn takes an operation *factory* with no arguments, so one
// closure per child is unavoidable with its public API.
function effectionParent(n) {
  return Effection.run(function* () {
    const tasks = new Array(n);
    for (let i = 0; i < n; i++) {
      tasks[i] = yield* Effection.spawn(function* () {
        return i;
      });
    }
    let sum = 0;
    for (let i = 0; i < n; i++) sum += yield* tasks[i];
    return sum;
  });
}

// --- Effect 3 / Effect 4: fork + Fiber.join -----------------------------------
function effectParent(Effect, Fiber, fork, n) {
  return Effect.runPromise(
    Effect.gen(function* () {
      const fibers = new Array(n);
      for (let i = 0; i < n; i++) fibers[i] = yield* fork(Effect.succeed(i));
      let sum = 0;
      for (let i = 0; i < n; i++) sum += yield* Fiber.join(fibers[i]);
      return sum;
    }),
  );
}
const effect3Parent = (n) => effectParent(E3.Effect, E3.Fiber, E3.Effect.fork, n);
const effect4Parent = (n) => effectParent(E4.Effect, E4.Fiber, E4.Effect.forkChild, n);

// --- Bobbin: hoisted generator functions, arguments passed through spawn -------
export function makeBobbin(B, options) {
  function* child(i) {
    return i;
  }
  function* parent(n) {
    const tasks = new Array(n);
    for (let i = 0; i < n; i++) tasks[i] = B.spawn(child, i);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += yield* B.awaitExn(tasks[i]);
    return sum;
  }
  return (n) =>
    B.run(function* () {
      return yield* parent(n);
    }, options);
}

export function contenders({ B, bobbinError }) {
  return [
    { contender: "async/await", anchor: "async", n: N, fn: asyncParent },
    // Effection's spawn is ~100× slower than the others; a smaller N keeps the run short
    // (time per child is what is compared, and it does not grow with N here).
    {
      contender: "Effection 4",
      apart: true,
      n: QUICK ? 5_000 : 20_000,
      fn: effectionParent,
      note: "smaller N (~100 µs per child, ~10 s per 100k run); per-child time measured roughly flat from 1k to 20k (86–101 µs)",
      iters: 3,
    },
    { contender: "Effect 3", apart: true, n: N, fn: effect3Parent },
    { contender: "Effect 4", apart: true, n: N, fn: effect4Parent },
    {
      contender: "Bobbin",
      n: N,
      fn: B ? makeBobbin(B) : null,
      error: bobbinError,
      targetSpec: { against: "async", max: 1.3, text: "≤ 1.3× async/await" },
    },
  ];
}

/**
 * async/await and Bobbin share rounds (see `interleave`); the others run apart. CPU time, 21
 * rounds: in wall time over 9 rounds the ratio of one run to the next spread over 1.38–2.99×
 * on a loaded machine, in CPU time over 21 rounds 1.49–1.69× (bench/README.md, Method).
 */
export const INTERLEAVE = { iters: 21, clock: "cpu" };

export async function run(results, ctx) {
  await runContenders(results, contenders(ctx), { scenario: SCENARIO, expect: expected, interleave: INTERLEAVE });
}
