// Scenario — a million fibers: started and parked, measured, woken, ended.
//
// Each contender starts N fibers that each store a wake-up handle and park;
// with all N parked the heap is collected and measured (heapUsed delta / N,
// as in memory.js); then the parent wakes every one and awaits its end. Three
// phases are timed, per fiber: start and park (from the first start until all
// N are parked), wake (the calls that make them ready), and end (until every
// one has run to its end and its result was collected). Rounds are
// interleaved: every contender runs once per round, in an order that rotates,
// all in one child process (`node --expose-gc`), so that load from other
// processes falls on all of them. Every round begins with a full GC.
//
//   raw generator   a plain generator suspended at a bare `yield`; woken by
//                   pushing it onto a ready array, ended by draining that
//                   array (`next(1)`): the floor, a scheduler of one loop;
//   async/await     an async function awaiting its own pending Promise, woken
//                   by its resolver, ended by `await` of its promise;
//   Bobbin (park)   `B.spawn` of a generator that stores `B.self()` and
//                   `yield* L.park()`s, woken by `L.unpark(task)`, ended by
//                   `B.awaitExn`;
//   Bobbin (Trigger) the same on `new L.Trigger()` and `yield* t.wait()`.
//
// The programs are memory.js's (the same fibers, bytes and handles: 16 B of
// array slots a fiber, 8 B for the raw generator); this scenario times them.
//
//   node --expose-gc src/million.js --child <n> <rounds> <contender,...>
// prints one JSON line: per contender, the samples of each measure.

import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { childJson, gc, median, QUICK, runContenders } from "./harness.js";
import { forgetHandles, IMPLS } from "./memory.js";

const SELF = fileURLToPath(import.meta.url);
const N = QUICK ? 200_000 : 1_000_000;
const ROUNDS = QUICK ? 3 : 7;
export const SCENARIO = "1M fibers";
const PHASES = [
  ["bytes", "bytes per parked fiber", "bytes"],
  ["park", "start and park", "time"],
  ["wake", "wake", "time"],
  ["end", "run to the end and collect", "time"],
];

// ------------------------------------------------------------------ child side

/** Runs `impl` once on n fibers; returns its bytes per fiber and the nanoseconds per fiber of each phase. */
async function once(impl, n) {
  gc();
  const base = process.memoryUsage().heapUsed;
  const t = { t0: performance.now(), parked: 0, start: 0, woken: 0, bytes: -1 };
  const clock = {
    parked: () => {
      t.parked = performance.now();
    },
    measure: () => {
      gc();
      t.bytes = (process.memoryUsage().heapUsed - base) / n;
    },
    start: () => {
      t.start = performance.now();
    },
    woken: () => {
      t.woken = performance.now();
    },
  };
  const sum = await impl(n, clock);
  const ended = performance.now();
  if (sum !== n) throw new Error(`wrong checksum ${sum}, expected ${n}`);
  if (t.bytes < 0 || t.woken === 0) throw new Error("a phase was never reached");
  forgetHandles();
  const ns = (ms) => (ms * 1e6) / n;
  return { bytes: t.bytes, park: ns(t.parked - t.t0), wake: ns(t.woken - t.start), end: ns(ended - t.woken) };
}

async function child(n, rounds, names) {
  const impls = names.map((name) => [name, IMPLS[name]]);
  const samples = Object.fromEntries(names.map((name) => [name, { bytes: [], park: [], wake: [], end: [] }]));
  for (const [, impl] of impls) await once(impl, Math.min(20_000, n)); // warm-up: load modules, JIT the paths
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < impls.length; k++) {
      const [name, impl] = impls[(round + k) % impls.length];
      const m = await once(impl, n);
      for (const [phase] of PHASES) samples[name][phase].push(m[phase]);
    }
  }
  process.stdout.write(`${JSON.stringify(samples)}\n`);
}

// ------------------------------------------------------------------ parent side

export async function run(results, { B, bobbinError }) {
  const list = [
    { contender: "raw generator (FIFO of generators)", anchor: "floor", impl: "raw" },
    { contender: "async/await (pending Promise)", anchor: "async", impl: "async" },
    { contender: "Bobbin (L.park)", impl: "bobbinPark", error: B ? null : bobbinError, target: true },
    { contender: "Bobbin (Trigger.wait)", impl: "bobbin", error: B ? null : bobbinError },
  ];
  const names = list.filter((c) => !c.error).map((c) => c.impl);
  let samples = null;
  let failure = null;
  try {
    const args = ["--expose-gc", "--max-old-space-size=8192", SELF, "--child", String(N), String(ROUNDS), names.join(",")];
    samples = await childJson(args, { timeoutMs: 600_000 });
  } catch (e) {
    failure = e;
  }
  for (const [phase, title, kind] of PHASES) {
    const contenders = list.map((c) => ({
      ...c,
      n: N,
      targetSpec:
        c.target && phase === "bytes"
          ? { against: "absolute", max: 256, text: "≤ 256 B, 1M fit", extra: (r) => r.n >= 1_000_000 }
          : undefined,
    }));
    await runContenders(results, contenders, {
      scenario: `${SCENARIO} · ${title}`,
      kind,
      measureOne: async (c) => {
        if (failure !== null) throw failure;
        const s = samples[c.impl][phase];
        return { perOp: median(s), samples: s };
      },
    });
  }
}

if (process.argv[1] === SELF && process.argv[2] === "--child") {
  const [, , , n, rounds, names] = process.argv;
  child(Number(n), Number(rounds), names.split(",")).catch((e) => {
    process.stderr.write(`${e?.stack ? e.stack : e}\n`);
    process.exit(1);
  });
}
