// Scenario 4 — memory per suspended fiber.
// N fibers each create their own one-shot wake-up, store it in a shared array and
// park on it. When all N are parked the heap is collected and measured
// (heapUsed delta / N); then every fiber is woken, runs to completion and is
// awaited, and the checksum (N) is verified.
//
// Each contender runs in its own child process (`node --expose-gc`) so that
// its number is not polluted by the garbage or JIT state of the others:
//   node --expose-gc src/memory.js --child <contender> <n>
// prints one JSON line { bytesPerFiber, n, ms }.
//
// What the measured bytes include, for every contender alike: the fiber (or
// promise / generator) itself, its wake-up handle, and the array slots (8 B each:
// one array of handles, one of tasks; the raw generator needs only one) that the
// parent needs to wake and await it.

import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { bobbinSpecifier, childJson, gc, lowlevelSpecifier, median, QUICK, runContenders } from "./harness.js";

export const SCENARIO = "suspended fiber memory";
const SELF = fileURLToPath(import.meta.url);
const FULL = QUICK ? 200_000 : 1_000_000;

// ------------------------------------------------------------------ contenders
// Each implementation: async (n, clock) => checksum, returning once every
// fiber has ended and its result was collected. With all n fibers parked it
// calls clock.measure() exactly once, synchronously. The contenders million.js
// times (raw, async, bobbin, bobbinPark) also call clock.parked() just before
// it (start and park are over), clock.start() just after (the waking begins)
// and clock.woken() once every fiber was woken.

let handles = null; // wake-up handles, one per fiber
let count = 0;

function resetHandles(n) {
  handles = new Array(n);
  count = 0;
}

/** Drops the handles of the last run (they would keep its fibers alive). */
export function forgetHandles() {
  handles = null;
}

// The floor: a suspended plain generator, woken by pushing it onto a ready
// array and run to its end by draining that array (a scheduler of one loop).
function* rawParked() {
  const v = yield;
  return v;
}
async function rawImpl(n, clock) {
  const gens = new Array(n);
  for (let i = 0; i < n; i++) {
    const g = rawParked();
    g.next();
    gens[i] = g;
  }
  clock.parked();
  clock.measure();
  clock.start();
  const ready = [];
  for (let i = 0; i < n; i++) ready.push(gens[i]);
  clock.woken();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += ready[i].next(1).value;
  return sum;
}

// async/await: each async function awaits its own not-yet-resolved Promise.
function storeResolver(resolve) {
  handles[count++] = resolve;
}
async function asyncParked() {
  return await new Promise(storeResolver);
}
async function asyncImpl(n, clock) {
  resetHandles(n);
  const ps = new Array(n);
  for (let i = 0; i < n; i++) ps[i] = asyncParked();
  clock.parked();
  clock.measure();
  clock.start();
  for (let i = 0; i < n; i++) handles[i](1);
  clock.woken();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += await ps[i];
  return sum;
}

// Effection 4: each task yield*s its own withResolvers() operation.
async function effectionImpl(n, clock) {
  const { run, spawn, withResolvers, sleep } = await import("effection");
  function* parked() {
    const r = withResolvers();
    handles[count++] = r.resolve;
    return yield* r.operation;
  }
  resetHandles(n);
  return run(function* () {
    const tasks = new Array(n);
    for (let i = 0; i < n; i++) tasks[i] = yield* spawn(parked); // one hoisted factory, no closure per task
    while (count < n) yield* sleep(0);
    clock.measure();
    for (let i = 0; i < n; i++) handles[i](1);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += yield* tasks[i];
    return sum;
  });
}

// Effect 3 / 4: each fiber makes its own Deferred and awaits it.
function effectImpl(mod, v) {
  return async (n, clock) => {
    const { Effect, Fiber, Deferred } = await import(mod);
    const fork = v === 3 ? Effect.fork : Effect.forkChild;
    const yieldNow = v === 3 ? Effect.yieldNow() : Effect.yieldNow;
    const storeAndAwait = (d) => {
      handles[count++] = d;
      return Deferred.await(d);
    };
    const parked = Effect.flatMap(Deferred.make(), storeAndAwait);
    resetHandles(n);
    return Effect.runPromise(
      Effect.gen(function* () {
        const fibers = new Array(n);
        for (let i = 0; i < n; i++) fibers[i] = yield* fork(parked);
        while (count < n) yield* yieldNow;
        yield* Effect.sync(clock.measure);
        for (let i = 0; i < n; i++) yield* Deferred.succeed(handles[i], 1);
        let sum = 0;
        for (let i = 0; i < n; i++) sum += yield* Fiber.join(fibers[i]);
        return sum;
      }),
    );
  };
}

/** A Bobbin contender: `body(B, L)` makes the fibers' body (it stores a handle and parks), `wake(L)` the call that wakes one by its handle. */
function bobbinImpl(body, wake) {
  return async (n, clock) => {
    const B = await import(bobbinSpecifier());
    const L = await import(lowlevelSpecifier());
    const parked = body(B, L);
    const wakeOne = wake(L);
    function* main(n) {
      const tasks = new Array(n);
      for (let i = 0; i < n; i++) tasks[i] = B.spawn(parked);
      while (count < n) yield* B.yieldNow();
      clock.parked();
      clock.measure();
      clock.start();
      for (let i = 0; i < n; i++) wakeOne(handles[i]);
      clock.woken();
      let sum = 0;
      for (let i = 0; i < n; i++) sum += yield* B.awaitExn(tasks[i]);
      return sum;
    }
    resetHandles(n);
    return B.run(function* () {
      return yield* main(n);
    });
  };
}

export const IMPLS = {
  raw: rawImpl,
  async: asyncImpl,
  effection: effectionImpl,
  effect3: effectImpl("effect3", 3),
  effect4: effectImpl("effect4", 4),
  // Bobbin: each fiber makes a Trigger, stores it, and waits on it.
  bobbin: bobbinImpl(
    (_B, L) =>
      function* parked() {
        const t = new L.Trigger();
        handles[count++] = t;
        yield* t.wait();
        return 1;
      },
    () => (t) => t.signal(),
  ),
  // Bobbin: each fiber parks on itself (`L.park`); its task is its handle.
  bobbinPark: bobbinImpl(
    (B, L) => {
      if (typeof L.park !== "function") throw new Error("@bobbin/core lacks lowlevel.park");
      return function* parked() {
        handles[count++] = B.self();
        yield* L.park();
        return 1;
      };
    },
    (L) => L.unpark,
  ),
};

// ------------------------------------------------------------------ child side

async function measureOnce(impl, n) {
  gc();
  const base = process.memoryUsage().heapUsed;
  let parkedBytes = null;
  const clock = {
    parked() {},
    measure() {
      if (parkedBytes !== null) throw new Error("measure called twice");
      gc();
      parkedBytes = process.memoryUsage().heapUsed - base;
    },
    start() {},
    woken() {},
  };
  const t0 = performance.now();
  const sum = await impl(n, clock);
  const ms = performance.now() - t0;
  if (sum !== n) throw new Error(`wrong checksum ${sum}, expected ${n}`);
  if (parkedBytes === null) throw new Error("measure was never called");
  handles = null;
  return { bytes: parkedBytes / n, ms };
}

async function child(name, n, rounds) {
  const impl = IMPLS[name];
  if (!impl) throw new Error(`unknown contender ${name}`);
  await measureOnce(impl, Math.min(10_000, n)); // warm-up: load modules, JIT the paths
  const bytes = [];
  const ms = [];
  for (let r = 0; r < rounds; r++) {
    const m = await measureOnce(impl, n);
    bytes.push(m.bytes);
    ms.push(m.ms);
  }
  process.stdout.write(`${JSON.stringify({ bytesPerFiber: median(bytes), samples: bytes, n, ms: median(ms) })}\n`);
}

// ------------------------------------------------------------------ parent side

function runChild(name, n, rounds, timeoutMs) {
  return childJson(["--expose-gc", "--max-old-space-size=12288", SELF, "--child", name, String(n), String(rounds)], { timeoutMs });
}

export function contenders({ B, bobbinError }) {
  return [
    { contender: "raw generator (suspended)", anchor: "floor", impl: "raw", n: FULL, rounds: 3 },
    { contender: "async/await (pending Promise)", anchor: "async", impl: "async", n: FULL, rounds: 3 },
    {
      contender: "Effection 4 (withResolvers)",
      impl: "effection",
      n: QUICK ? 10_000 : 50_000,
      rounds: 1,
      note: "smaller N: at ~11 KB and ~120 µs per parked task, 1M would need ~11 GB of heap and minutes; bytes/fiber measured the same at 50k and 100k",
    },
    {
      contender: "Effect 3 (Deferred.await)",
      impl: "effect3",
      n: QUICK ? 20_000 : 100_000,
      rounds: 1,
      note: "smaller N: parking + releasing costs ~35 µs per fiber (1M took ~57 s); bytes/fiber measured the same at 100k, 200k and 1M",
    },
    {
      contender: "Effect 4 (Deferred.await)",
      impl: "effect4",
      n: FULL,
      rounds: 3,
      note: "a fiber parked on Effect.never (not wakeable) costs ~430 B; waiting on a Deferred that can be completed costs this",
    },
    {
      contender: "Bobbin (Trigger.wait)",
      impl: "bobbin",
      n: FULL,
      rounds: 3,
      error: B ? null : bobbinError,
      targetSpec: { against: "absolute", max: 300, text: "≤ 300 B, 1M fit", extra: (r) => r.n >= 1_000_000 },
    },
  ];
}

export async function run(results, ctx) {
  await runContenders(results, contenders(ctx), {
    scenario: SCENARIO,
    kind: "bytes",
    measureOne: async (c) => {
      const r = await runChild(c.impl, c.n, c.rounds, 120_000);
      return { perOp: r.bytesPerFiber, samples: r.samples };
    },
  });
}

if (process.argv[1] === SELF && process.argv[2] === "--child") {
  const [, , , name, n, rounds] = process.argv;
  child(name, Number(n), Number(rounds ?? 1)).catch((e) => {
    process.stderr.write(`${e?.stack ? e.stack : e}\n`);
    process.exit(1);
  });
}
