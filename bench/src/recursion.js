// Scenario 3 — depth-100 recursion.
// A task spawns one child and awaits it; that child does the same, down to depth
// DEPTH (the leaf returns 1, every level adds 1). The whole chain is repeated
// REPS times inside one run. Reported: time per depth-100 chain (= DEPTH spawns + awaits).
//
// Effection's own benchmark suite has a "recursion" scenario; there the recursion
// is by `yield*` delegation with promise awaits at the bottom. Here every level is
// a spawned task that its parent awaits, which is what a structured-concurrency
// runtime pays for a deep task tree.

import * as E3 from "effect3";
import * as E4 from "effect4";
import * as Effection from "effection";
import { QUICK, runContenders } from "./harness.js";

export const SCENARIO = "depth-100 recursion";
export const DEPTH = 100;
const scale = QUICK ? 0.2 : 1;
const reps = (r) => Math.max(5, Math.round(r * scale));

// --- async/await ----------------------------------------------------------------
async function asyncRec(d) {
  if (d > 1) {
    const child = asyncRec(d - 1);
    return 1 + (await child);
  }
  return 1;
}
async function asyncMain(r) {
  let sum = 0;
  for (let i = 0; i < r; i++) sum += await asyncRec(DEPTH);
  return sum / DEPTH;
}

// --- Effection 4: spawn + yield* task -------------------------------------------
function* effectionRec(d) {
  if (d > 1) {
    const child = yield* Effection.spawn(() => effectionRec(d - 1));
    return 1 + (yield* child);
  }
  return 1;
}
function effectionMain(r) {
  return Effection.run(function* () {
    let sum = 0;
    for (let i = 0; i < r; i++) {
      const t = yield* Effection.spawn(() => effectionRec(DEPTH));
      sum += yield* t;
    }
    return sum / DEPTH;
  });
}

// --- Effect 3 / 4: fork + Fiber.join --------------------------------------------
function makeEffect(Effect, Fiber, fork) {
  const leaf = Effect.succeed(1);
  const rec = (d) =>
    d > 1
      ? Effect.gen(function* () {
          const child = yield* fork(rec(d - 1));
          return 1 + (yield* Fiber.join(child));
        })
      : leaf;
  return (r) =>
    Effect.runPromise(
      Effect.gen(function* () {
        let sum = 0;
        for (let i = 0; i < r; i++) {
          const t = yield* fork(rec(DEPTH));
          sum += yield* Fiber.join(t);
        }
        return sum / DEPTH;
      }),
    );
}

// --- Bobbin: hoisted generator, depth passed through spawn ------------------------
function makeBobbin(B) {
  function* rec(d) {
    if (d > 1) {
      const child = B.spawn(rec, d - 1);
      return 1 + (yield* B.awaitExn(child));
    }
    return 1;
  }
  function* main(r) {
    let sum = 0;
    for (let i = 0; i < r; i++) sum += yield* B.awaitExn(B.spawn(rec, DEPTH));
    return sum / DEPTH;
  }
  return (r) =>
    B.run(function* () {
      return yield* main(r);
    });
}

export function contenders({ B, bobbinError }) {
  return [
    { contender: "async/await", anchor: "async", n: reps(10_000), fn: asyncMain },
    { contender: "Effection 4", n: reps(40), fn: effectionMain },
    { contender: "Effect 3", n: reps(200), fn: makeEffect(E3.Effect, E3.Fiber, E3.Effect.fork) },
    { contender: "Effect 4", n: reps(600), fn: makeEffect(E4.Effect, E4.Fiber, E4.Effect.forkChild) },
    { contender: "Bobbin", n: reps(10_000), fn: B ? makeBobbin(B) : null, error: bobbinError },
  ];
}

export async function run(results, ctx) {
  await runContenders(results, contenders(ctx), { scenario: SCENARIO });
}
