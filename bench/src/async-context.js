// Scenario — what AsyncLocalStorage following tasks costs: spawn-await.js's
// spawn + await of 100k children, and a context switch (two fibers, 1M
// yields), with no store in use, with a store set where `run` is called (the
// storage is enabled, the tasks share the run's context), and with a store
// entered by the tasks themselves (every task has a context of its own, and
// each of its steps runs in it). async/await beside them, without and with a
// store. Each row with a store disables its storage afterwards, so that the
// rows after it run as they would without.
//
// The echo server with a store per connection is a mode of echo.js
// (`bobbin-store`: each connection's task enters a store first); run it with
//   node bench/src/echo.js --modes=net,bobbin,bobbin-store

import { AsyncLocalStorage } from "node:async_hooks";
import { QUICK, runContenders } from "./harness.js";
import { asyncParent, expected, INTERLEAVE, makeBobbin, N } from "./spawn-await.js";
import { asyncPingPong } from "./switch.js";

export const SCENARIO = "spawn+await, AsyncLocalStorage";
export const SWITCH_SCENARIO = "context switch, AsyncLocalStorage";
const SWITCHES = QUICK ? 200_000 : 1_000_000;

/** Runs `fn` inside a store of a storage of its own, disabled afterwards. */
function inStore(fn) {
  return async (n) => {
    const als = new AsyncLocalStorage();
    try {
      return await als.run({ request: 1 }, () => fn(n));
    } finally {
      als.disable();
    }
  };
}

/** spawn-await's program, where the parent enters a store first: every child is spawned in it. */
function makeEntered(B) {
  function* child(i) {
    return i;
  }
  function* parent(n, als) {
    als.enterWith({ request: 1 });
    const tasks = new Array(n);
    for (let i = 0; i < n; i++) tasks[i] = B.spawn(child, i);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += yield* B.awaitExn(tasks[i]);
    return sum;
  }
  return async (n) => {
    const als = new AsyncLocalStorage();
    try {
      return await B.run(function* () {
        return yield* parent(n, als);
      });
    } finally {
      als.disable();
    }
  };
}

/** Two fibers ping-pong with `yield* B.yieldNow()`; `enter` says whether each enters a store first. */
function makeSwitch(B, enter) {
  function* worker(n, als) {
    if (als !== null) als.enterWith({ worker: n });
    for (let i = 0; i < n; i++) yield* B.yieldNow();
    return n;
  }
  return async (total) => {
    const als = enter ? new AsyncLocalStorage() : null;
    try {
      return await B.run(function* () {
        const a = B.spawn(worker, total / 2, als);
        const b = B.spawn(worker, total / 2, als);
        return (yield* B.awaitExn(a)) + (yield* B.awaitExn(b));
      });
    } finally {
      als?.disable();
    }
  };
}

export function contenders({ B, bobbinError }) {
  const error = bobbinError;
  const bobbin = B ? makeBobbin(B) : null;
  return [
    { contender: "async/await", anchor: "async", n: N, fn: asyncParent },
    { contender: "async/await, in a store", n: N, fn: inStore(asyncParent) },
    { contender: "Bobbin, no store", n: N, fn: bobbin, error, note: "the program of spawn+await's Bobbin row" },
    { contender: "Bobbin, in a store set where run is called", n: N, fn: bobbin && inStore(bobbin), error },
    { contender: "Bobbin, the parent entered a store", n: N, fn: B ? makeEntered(B) : null, error },
  ];
}

function switchContenders({ B, bobbinError }) {
  const error = bobbinError;
  return [
    { scenario: SWITCH_SCENARIO, contender: "async/await (`await null`)", anchor: "async", n: SWITCHES, fn: asyncPingPong },
    { scenario: SWITCH_SCENARIO, contender: "Bobbin, no store", n: SWITCHES, fn: B ? makeSwitch(B, false) : null, error },
    {
      scenario: SWITCH_SCENARIO,
      contender: "Bobbin, in a store set where run is called",
      n: SWITCHES,
      fn: B ? inStore(makeSwitch(B, false)) : null,
      error,
    },
    { scenario: SWITCH_SCENARIO, contender: "Bobbin, each fiber entered a store", n: SWITCHES, fn: B ? makeSwitch(B, true) : null, error },
  ];
}

export async function run(results, ctx) {
  // The rows of a scenario share rounds, as spawn+await's and the context switch's do (see harness.js), spawn + await's timed as its row is.
  await runContenders(results, contenders(ctx), { scenario: SCENARIO, expect: expected, interleave: INTERLEAVE });
  await runContenders(results, switchContenders(ctx), {
    scenario: SWITCH_SCENARIO,
    expect: (n) => n,
    interleave: { iters: 15, clock: "cpu" },
  });
}
