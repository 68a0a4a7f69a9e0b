// @bobbin/sync scenarios, side by side with async-mutex and Effect's Semaphore
// (Effect 3 and Effect 4) in the same process:
//
//   1. lock/unlock, uncontended — one task locks and unlocks N times.
//   2. lock/unlock, contended — 4 tasks each lock, yield to the scheduler while
//      holding the lock (so the others queue up), and unlock; N locks in total.
//   3. semaphore pipeline — 3 stages joined by two bounded buffers of 16 slots,
//      each buffer guarded by two counting semaphores (free slots / full slots);
//      N items flow through. Time per item.
//
// Part of `pnpm bench` (main.js runs `run(results, ctx)`), and runnable alone:
//   node --expose-gc bench/src/sync.js [--quick]
// `@bobbin/sync` must be built (`pnpm --filter @bobbin/sync build`).

import os from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as AsyncMutex from "async-mutex";
import * as E3 from "effect3";
import * as E4 from "effect4";
import { collectRows, fmtValue, machine, QUICK, runContenders, textNotes, textTable, writeFile } from "./harness.js";

export const SCENARIO = "sync";
const UNCONTENDED = QUICK ? 200_000 : 1_000_000;
const CONTENDED = QUICK ? 50_000 : 200_000;
const PIPELINE = QUICK ? 50_000 : 200_000;
const TASKS = 4;
const SLOTS = 16;

/**
 * Effect 3 and Effect 4 spell the same things differently; the Effect
 * contenders below are written once against these.
 */
const EFFECT3 = {
  Effect: E3.Effect,
  makeSem: (n) => E3.Effect.makeSemaphore(n),
  takeOf: (s) => s.take(1),
  releaseOf: (s) => s.release(1),
  fork: E3.Effect.fork,
  Fiber: E3.Fiber,
  yieldNow: E3.Effect.yieldNow(),
};
const EFFECT4 = {
  Effect: E4.Effect,
  makeSem: (n) => E4.Semaphore.make(n),
  takeOf: (s) => E4.Semaphore.take(s, 1),
  releaseOf: (s) => E4.Semaphore.release(s, 1),
  fork: E4.Effect.forkChild,
  Fiber: E4.Fiber,
  yieldNow: E4.Effect.yieldNow,
};

/**
 * @bobbin/sync and the @bobbin/core it runs on. Sync is imported first and core
 * from the same place, so both share one scheduler module (BOBBIN_CORE does
 * not apply here: sync must run on the core it was built against).
 */
async function loadSync() {
  try {
    const S = await import("@bobbin/sync");
    const B = await import("@bobbin/core");
    const missing = ["Mutex", "Semaphore"].filter((k) => S[k] === undefined);
    if (missing.length) return { S: null, B: null, error: `@bobbin/sync lacks ${missing.join(", ")}` };
    return { S, B, error: null };
  } catch (e) {
    const msg =
      e && e.code === "ERR_MODULE_NOT_FOUND"
        ? "@bobbin/sync is not built (run `pnpm --filter @bobbin/sync build`)"
        : `cannot import @bobbin/sync: ${e?.message ? e.message.split("\n")[0] : e}`;
    return { S: null, B: null, error: msg };
  }
}

// ----------------------------------------------------------- 1. uncontended

async function asyncMutexUncontended(n) {
  const m = new AsyncMutex.Mutex();
  let count = 0;
  for (let i = 0; i < n; i++) {
    const release = await m.acquire();
    count++;
    release();
  }
  return count;
}

async function asyncMutexRunExclusive(n) {
  const m = new AsyncMutex.Mutex();
  let count = 0;
  const body = () => {
    count++;
  };
  for (let i = 0; i < n; i++) await m.runExclusive(body);
  return count;
}

function effectUncontended({ Effect, makeSem, takeOf, releaseOf }) {
  return (n) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const sem = yield* makeSem(1);
        const take = takeOf(sem);
        const release = releaseOf(sem);
        let count = 0;
        for (let i = 0; i < n; i++) {
          yield* take;
          count++;
          yield* release;
        }
        return count;
      }),
    );
}

function bobbinUncontended(B, S) {
  return (n) =>
    B.run(function* () {
      const m = new S.Mutex();
      let count = 0;
      for (let i = 0; i < n; i++) {
        yield* m.lock();
        count++;
        m.unlock();
      }
      return count;
    });
}

function bobbinProtect(B, S) {
  return (n) =>
    B.run(function* () {
      const m = new S.Mutex();
      let count = 0;
      const body = () => {
        count++;
      };
      for (let i = 0; i < n; i++) yield* m.protect(body);
      return count;
    });
}

function bobbinSemaphoreUncontended(B, S) {
  return (n) =>
    B.run(function* () {
      const s = new S.Semaphore(1);
      let count = 0;
      for (let i = 0; i < n; i++) {
        yield* s.acquire();
        count++;
        s.release();
      }
      return count;
    });
}

// ------------------------------------------------------------- 2. contended
// Each task holds the lock across one yield, so every lock after the first
// finds it taken: the measured path is queue + hand-off + wake-up.

async function asyncMutexContended(n) {
  const m = new AsyncMutex.Mutex();
  let count = 0;
  let inside = 0;
  const per = n / TASKS;
  const worker = async () => {
    for (let i = 0; i < per; i++) {
      const release = await m.acquire();
      if (++inside !== 1) throw new Error("two holders");
      await null;
      inside--;
      count++;
      release();
    }
  };
  await Promise.all(Array.from({ length: TASKS }, worker));
  return count;
}

function effectContended({ Effect, makeSem, takeOf, releaseOf, fork, Fiber, yieldNow }) {
  return (n) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const sem = yield* makeSem(1);
        const take = takeOf(sem);
        const release = releaseOf(sem);
        const per = n / TASKS;
        let count = 0;
        let inside = 0;
        const worker = Effect.gen(function* () {
          for (let i = 0; i < per; i++) {
            yield* take;
            if (++inside !== 1) throw new Error("two holders");
            yield* yieldNow;
            inside--;
            count++;
            yield* release;
          }
        });
        const fibers = [];
        for (let t = 0; t < TASKS; t++) fibers.push(yield* fork(worker));
        for (const f of fibers) yield* Fiber.join(f);
        return count;
      }),
    );
}
function bobbinContended(B, S) {
  const state = { count: 0, inside: 0 };
  function* worker(m, per) {
    for (let i = 0; i < per; i++) {
      yield* m.lock();
      if (++state.inside !== 1) throw new Error("two holders");
      yield* B.yieldNow();
      state.inside--;
      state.count++;
      m.unlock();
    }
  }
  return (n) =>
    B.run(function* () {
      const m = new S.Mutex();
      state.count = 0;
      const tasks = [];
      for (let t = 0; t < TASKS; t++) tasks.push(B.spawn(worker, m, n / TASKS));
      for (const t of tasks) yield* B.awaitExn(t);
      if (m.waiters !== 0 || m.isLocked) throw new Error("mutex left locked");
      return state.count;
    });
}

// ------------------------------------------------------ 3. semaphore pipeline
// source → [free A / full A] → double → [free B / full B] → sum. Returns the
// number of items that reached the sink after checking their sum.

const expectedSum = (n) => n * (n - 1); // Σ 2i for i < n

async function asyncMutexPipeline(n) {
  const freeA = new AsyncMutex.Semaphore(SLOTS);
  const fullA = new AsyncMutex.Semaphore(0);
  const freeB = new AsyncMutex.Semaphore(SLOTS);
  const fullB = new AsyncMutex.Semaphore(0);
  const a = [];
  const b = [];
  let sum = 0;
  const source = async () => {
    for (let i = 0; i < n; i++) {
      await freeA.acquire();
      a.push(i);
      fullA.release();
    }
  };
  const stage = async () => {
    for (let i = 0; i < n; i++) {
      await fullA.acquire();
      const x = a.shift();
      freeA.release();
      await freeB.acquire();
      b.push(x * 2);
      fullB.release();
    }
  };
  const sink = async () => {
    for (let i = 0; i < n; i++) {
      await fullB.acquire();
      sum += b.shift();
      freeB.release();
    }
  };
  await Promise.all([source(), stage(), sink()]);
  if (sum !== expectedSum(n)) throw new Error(`pipeline sum ${sum}`);
  return n;
}

function effectPipeline({ Effect, makeSem, takeOf, releaseOf, fork, Fiber }) {
  return (n) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const freeA = yield* makeSem(SLOTS);
        const fullA = yield* makeSem(0);
        const freeB = yield* makeSem(SLOTS);
        const fullB = yield* makeSem(0);
        const [takeFreeA, takeFullA, takeFreeB, takeFullB] = [freeA, fullA, freeB, fullB].map(takeOf);
        const [relFreeA, relFullA, relFreeB, relFullB] = [freeA, fullA, freeB, fullB].map(releaseOf);
        const a = [];
        const b = [];
        let sum = 0;
        const source = Effect.gen(function* () {
          for (let i = 0; i < n; i++) {
            yield* takeFreeA;
            a.push(i);
            yield* relFullA;
          }
        });
        const stage = Effect.gen(function* () {
          for (let i = 0; i < n; i++) {
            yield* takeFullA;
            const x = a.shift();
            yield* relFreeA;
            yield* takeFreeB;
            b.push(x * 2);
            yield* relFullB;
          }
        });
        const sink = Effect.gen(function* () {
          for (let i = 0; i < n; i++) {
            yield* takeFullB;
            sum += b.shift();
            yield* relFreeB;
          }
        });
        const fibers = [yield* fork(source), yield* fork(stage), yield* fork(sink)];
        for (const f of fibers) yield* Fiber.join(f);
        if (sum !== expectedSum(n)) throw new Error(`pipeline sum ${sum}`);
        return n;
      }),
    );
}
function bobbinPipeline(B, S) {
  function* source(n, freeA, fullA, a) {
    for (let i = 0; i < n; i++) {
      yield* freeA.acquire();
      a.push(i);
      fullA.release();
    }
  }
  function* stage(n, fullA, freeA, freeB, fullB, a, b) {
    for (let i = 0; i < n; i++) {
      yield* fullA.acquire();
      const x = a.shift();
      freeA.release();
      yield* freeB.acquire();
      b.push(x * 2);
      fullB.release();
    }
  }
  function* sink(n, fullB, freeB, b, out) {
    for (let i = 0; i < n; i++) {
      yield* fullB.acquire();
      out.sum += b.shift();
      freeB.release();
    }
  }
  return (n) =>
    B.run(function* () {
      const freeA = new S.Semaphore(SLOTS);
      const fullA = new S.Semaphore(0);
      const freeB = new S.Semaphore(SLOTS);
      const fullB = new S.Semaphore(0);
      const a = [];
      const b = [];
      const out = { sum: 0 };
      const tasks = [
        B.spawn(source, n, freeA, fullA, a),
        B.spawn(stage, n, fullA, freeA, freeB, fullB, a, b),
        B.spawn(sink, n, fullB, freeB, b, out),
      ];
      for (const t of tasks) yield* B.awaitExn(t);
      if (out.sum !== expectedSum(n)) throw new Error(`pipeline sum ${out.sum}`);
      return n;
    });
}

// ------------------------------------------------------------------ contenders

const ANCHOR = 'the "vs async/await" column of this scenario compares with this row (async-mutex is the async/await way to lock)';

export function contenders({ S, B, syncError }) {
  const bobbin = (make) => (S && B ? make(B, S) : null);
  return [
    // 1. uncontended
    {
      scenario: "lock/unlock, uncontended",
      contender: "async-mutex Mutex (acquire/release)",
      anchor: "async",
      n: UNCONTENDED,
      fn: asyncMutexUncontended,
      note: ANCHOR,
    },
    { scenario: "lock/unlock, uncontended", contender: "async-mutex Mutex (runExclusive)", n: UNCONTENDED, fn: asyncMutexRunExclusive },
    {
      scenario: "lock/unlock, uncontended",
      contender: "Effect 3 Semaphore(1) take/release",
      n: UNCONTENDED,
      fn: effectUncontended(EFFECT3),
    },
    {
      scenario: "lock/unlock, uncontended",
      contender: "Effect 4 Semaphore(1) take/release",
      n: UNCONTENDED,
      fn: effectUncontended(EFFECT4),
    },
    {
      scenario: "lock/unlock, uncontended",
      contender: "Bobbin Mutex (lock/unlock)",
      n: UNCONTENDED,
      fn: bobbin(bobbinUncontended),
      error: syncError,
    },
    {
      scenario: "lock/unlock, uncontended",
      contender: "Bobbin Mutex.protect(plain fn)",
      n: UNCONTENDED,
      fn: bobbin(bobbinProtect),
      error: syncError,
    },
    {
      scenario: "lock/unlock, uncontended",
      contender: "Bobbin Semaphore(1) acquire/release",
      n: UNCONTENDED,
      fn: bobbin(bobbinSemaphoreUncontended),
      error: syncError,
    },
    // 2. contended
    {
      scenario: "lock/unlock, contended (4 tasks)",
      contender: "async-mutex Mutex (acquire/release)",
      anchor: "async",
      n: CONTENDED,
      fn: asyncMutexContended,
      note: `holds the lock across \`await null\`; ${ANCHOR}`,
    },
    {
      scenario: "lock/unlock, contended (4 tasks)",
      contender: "Effect 3 Semaphore(1) take/release",
      n: CONTENDED,
      fn: effectContended(EFFECT3),
      note: "holds the lock across Effect.yieldNow",
    },
    {
      scenario: "lock/unlock, contended (4 tasks)",
      contender: "Effect 4 Semaphore(1) take/release",
      n: CONTENDED,
      fn: effectContended(EFFECT4),
      note: "holds the lock across Effect.yieldNow",
    },
    {
      scenario: "lock/unlock, contended (4 tasks)",
      contender: "Bobbin Mutex (lock/unlock)",
      n: CONTENDED,
      fn: bobbin(bobbinContended),
      error: syncError,
      note: "holds the lock across B.yieldNow()",
    },
    // 3. pipeline
    {
      scenario: "semaphore pipeline (3 stages)",
      contender: "async-mutex Semaphore",
      anchor: "async",
      n: PIPELINE,
      fn: asyncMutexPipeline,
      note: ANCHOR,
    },
    { scenario: "semaphore pipeline (3 stages)", contender: "Effect 3 Semaphore", n: PIPELINE, fn: effectPipeline(EFFECT3) },
    { scenario: "semaphore pipeline (3 stages)", contender: "Effect 4 Semaphore", n: PIPELINE, fn: effectPipeline(EFFECT4) },
    { scenario: "semaphore pipeline (3 stages)", contender: "Bobbin Semaphore", n: PIPELINE, fn: bobbin(bobbinPipeline), error: syncError },
  ];
}

/** Runs every sync scenario and adds its rows to `results` (the harness's `Results`). */
export async function run(results, _ctx = {}) {
  const { S, B, error: syncError } = await loadSync();
  if (syncError) console.log(`  Bobbin sync: ${syncError} — its rows will be empty`);
  return runContenders(results, contenders({ S, B, syncError }));
}

/** The sync rows alone (for callers that do not use the harness's `Results`). */
export const rows = () => collectRows(run);

/**
 * The sync rows as a Markdown table for @bobbin/sync's README: time per
 * operation, and how many times faster than async-mutex (the async/await way
 * to lock) each contender is.
 */
export function syncMarkdown(rows, m = machine(), when = new Date(), load = os.loadavg()[0]) {
  const out = [];
  out.push(
    `Measured by \`node --expose-gc bench/src/sync.js\` on ${when.toISOString().slice(0, 10)}: ${m.cpu}, ${m.cores} cores, Node ${m.node}; ` +
      `load average ${load.toFixed(1)} at the end. Medians of 7 runs after 2 warm-up runs; lower time/op is better.`,
  );
  out.push("");
  out.push("| scenario | contender | N | time/op | speed vs async-mutex |");
  out.push("|---|---|---:|---:|---:|");
  for (const r of rows) {
    const x = (v) => (v >= 10 ? v.toFixed(0) : v.toFixed(2));
    const speed = r.error || r.vsAsync == null ? "—" : r.vsAsync <= 1 ? `${x(1 / r.vsAsync)}× faster` : `${x(r.vsAsync)}× slower`;
    const n = r.n >= 1e6 ? `${r.n / 1e6}M` : `${r.n / 1e3}k`;
    out.push(
      `| ${r.scenario} | ${r.contender} | ${n} | ${r.error ? "n/a" : fmtValue(r.perOp, "time")} | ${r.anchor === "async" ? "1× (anchor)" : speed} |`,
    );
  }
  out.push("");
  return out.join("\n");
}

// --- standalone: node --expose-gc bench/src/sync.js [--quick] ----------------
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (typeof globalThis.gc !== "function") console.log("warning: run with `node --expose-gc` for stable numbers");
  console.log(`▶ ${SCENARIO}`);
  const all = await rows();
  console.log(`\n${textTable(all)}`);
  const notes = textNotes(all, [
    'time/op: per lock+unlock (uncontended, contended) or per item through the pipeline; medians of 7 runs after 2 warm-up runs. The "vs async/await" column compares with async-mutex, the async/await way to lock.',
  ]);
  if (notes) console.log(`\n${notes}`);
  const md = syncMarkdown(all);
  if (!QUICK) {
    const out = fileURLToPath(new URL("../results/sync.md", import.meta.url));
    writeFile(out, md);
    console.log(`\nMarkdown written to ${out}`);
  } else console.log(`\n${md}`);
}
