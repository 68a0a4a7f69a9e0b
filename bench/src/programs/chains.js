// Deep call chains: N tasks started together, each a chain of 20 nested helpers
// (each awaits the next and adds its depth to the answer); the innermost one
// waits one turn of its scheduler (its "I/O") and answers the task's index.
// Checked: the sum of the answers.

import * as E3 from "effect3";
import * as E4 from "effect4";
import * as Effection from "effection";
import { effectionYield } from "./common.js";

export const NAME = "call chains: 50k tasks × 20 nested helpers";
export const UNIT = "task";
export const N = 50_000;
const DEPTH = 20;

export function expected(n) {
  return (n * (n - 1)) / 2 + (n * DEPTH * (DEPTH + 1)) / 2;
}

// --- async/await: async helpers, Promise.all -----------------------------------------
async function asyncHelper(d, x) {
  if (d === 0) {
    await null;
    return x;
  }
  return (await asyncHelper(d - 1, x)) + d;
}

async function asyncChains(n) {
  const tasks = new Array(n);
  for (let i = 0; i < n; i++) tasks[i] = asyncHelper(DEPTH, i);
  let sum = 0;
  for (const v of await Promise.all(tasks)) sum += v;
  return sum;
}

// --- Effection 4: generator helpers, all() ---------------------------------------------
function* effectionHelper(d, x) {
  if (d === 0) {
    yield* effectionYield;
    return x;
  }
  return (yield* effectionHelper(d - 1, x)) + d;
}

function effectionChains(n) {
  return Effection.run(function* () {
    const tasks = new Array(n);
    for (let i = 0; i < n; i++) tasks[i] = effectionHelper(DEPTH, i);
    let sum = 0;
    for (const v of yield* Effection.all(tasks)) sum += v;
    return sum;
  });
}

// --- Effect 3 / 4: Effect.gen helpers, forEach({ concurrency: "unbounded" }) ----------
function effectChains(Effect, yieldNow) {
  const helper = (d, x) =>
    d === 0
      ? Effect.as(yieldNow, x)
      : Effect.gen(function* () {
          return (yield* helper(d - 1, x)) + d;
        });
  return (n) => {
    const ids = Array.from({ length: n }, (_, i) => i);
    return Effect.runPromise(
      Effect.map(
        Effect.forEach(ids, (i) => helper(DEPTH, i), { concurrency: "unbounded" }),
        (vs) => vs.reduce((a, b) => a + b, 0),
      ),
    );
  };
}

// --- Bobbin: generator helpers, B.map --------------------------------------------------
export function bobbinChains(B) {
  function* helper(d, x) {
    if (d === 0) {
      yield* B.yieldNow();
      return x;
    }
    return (yield* helper(d - 1, x)) + d;
  }
  function* task(i) {
    return yield* helper(DEPTH, i);
  }
  return (n) =>
    B.run(function* () {
      const ids = Array.from({ length: n }, (_, i) => i);
      let sum = 0;
      for (const v of yield* B.map(ids, task)) sum += v;
      return sum;
    });
}

export function contenders() {
  return [
    { contender: "async/await (Promise.all)", anchor: "async", fn: asyncChains },
    { contender: "Effection 4 (all)", fn: effectionChains },
    { contender: "Effect 3 (Effect.gen, forEach)", fn: effectChains(E3.Effect, E3.Effect.yieldNow()) },
    { contender: "Effect 4 (Effect.gen, forEach)", fn: effectChains(E4.Effect, E4.Effect.yieldNow) },
  ];
}

export const bobbin = [{ contender: "Bobbin (B.map)", make: bobbinChains }];
