// Scenario — the task record and the cost of awaiting an ended child.
//
// Two measurements, each in its own child process (`node --expose-gc`), so no
// other contender's garbage is in the heap:
//
// 1. **bytes kept per pending child**: a parent spawns N children that have
//    not run yet and keeps nothing of them itself; with all N pending, `gc()`,
//    heapUsed delta / N. For Bobbin the row is the task record alone: the
//    lists that hold the children (the run queue's and the parent's chunks,
//    with their spare slots) are computed and subtracted. Target
//    ≤ 72 B. async/await: an async child that has not settled yet (a pending
//    Promise awaiting a never-resolved one, plus the array slot that keeps it).
// 2. **bytes allocated per await of an ended child**: N children that have all
//    ended, awaited one after another with `awaitExn` (async: `await` of a
//    settled Promise); heapUsed delta / N with no GC in between (the young
//    generation is made large enough). Target: 0 B for Bobbin.
//
//   node --expose-gc src/task-record.js --child <contender> <n>

import { fileURLToPath } from "node:url";
import { bobbinSpecifier, childJson, gc, median, QUICK, runContenders } from "./harness.js";

export const SCENARIO = "task record";
export const AWAIT_SCENARIO = "await of an ended child";
const SELF = fileURLToPath(import.meta.url);
const N = QUICK ? 100_000 : 500_000;
/**
 * Bytes per child of the two lists that hold pending Bobbin children, both
 * chunked FIFOs (core's kernel/run-queue.ts): the run queue's, whose chunks
 * hold 1024 tasks, and the parent's, whose first chunk holds 16 and each next
 * one twice as many, up to 1024. A chunk is an array of its slots and a link
 * to the next (a 32 B JSArray, a FixedArray of a 16 B header and 8 B a slot);
 * the next chunk is linked as soon as one is full.
 */
function containerBytesPerChild(n) {
  const chunks = (first) => {
    let bytes = 0;
    for (let size = first, held = 0; held <= n; held += size, size = Math.min(size * 2, 1024)) bytes += 32 + 16 + 8 * (size + 1);
    return bytes;
  };
  return (chunks(1024) + chunks(16)) / n;
}

function* child(i) {
  return i;
}

/** 0 + 1 + … + (n − 1), in 32-bit arithmetic as the loops add it. */
function checksum(n) {
  let sum = 0;
  for (let i = 0; i < n; i++) sum = (sum + i) | 0;
  return sum;
}

const IMPLS = {
  async "pending-async"(n) {
    const never = new Promise(() => {});
    const keep = new Array(n);
    async function pendingChild() {
      await never;
    }
    gc();
    const base = process.memoryUsage().heapUsed;
    for (let i = 0; i < n; i++) keep[i] = pendingChild();
    gc();
    return (process.memoryUsage().heapUsed - base) / n;
  },
  async "pending-bobbin"(n) {
    const B = await import(bobbinSpecifier());
    const measured = new Error("measured");
    let bytes = 0;
    try {
      await B.run(function* () {
        gc();
        const base = process.memoryUsage().heapUsed;
        // Queued, never run, and not kept by the parent: only the tree holds them.
        for (let i = 0; i < n; i++) B.spawn(child, i);
        gc();
        bytes = (process.memoryUsage().heapUsed - base) / n - containerBytesPerChild(n);
        throw measured; // failing, the parent cancels them all (they never run)
      });
    } catch (error) {
      if (error !== measured) throw error;
    }
    return bytes;
  },
  async "await-async"(n) {
    async function ended(i) {
      return i;
    }
    const ps = new Array(n);
    for (let i = 0; i < n; i++) ps[i] = ended(i);
    await null;
    const base = process.memoryUsage().heapUsed;
    let sum = 0;
    for (let i = 0; i < n; i++) sum = (sum + (await ps[i])) | 0; // stays a small integer: no heap number per addition
    const bytes = (process.memoryUsage().heapUsed - base) / n;
    if (sum !== checksum(n)) throw new Error("wrong checksum");
    return bytes;
  },
  async "await-bobbin"(n) {
    const B = await import(bobbinSpecifier());
    return B.run(function* () {
      const ts = new Array(n);
      for (let i = 0; i < n; i++) ts[i] = B.spawn(child, i);
      yield* B.yieldNow(); // every child runs and ends
      const base = process.memoryUsage().heapUsed;
      let sum = 0;
      for (let i = 0; i < n; i++) sum = (sum + (yield* B.awaitExn(ts[i]))) | 0;
      const bytes = (process.memoryUsage().heapUsed - base) / n;
      if (sum !== checksum(n)) throw new Error("wrong checksum");
      return bytes;
    });
  },
};

async function childMain(name, n, rounds) {
  const impl = IMPLS[name];
  if (!impl) throw new Error(`unknown contender ${name}`);
  await impl(Math.min(10_000, n)); // warm-up: load modules, JIT the paths
  const samples = [];
  for (let r = 0; r < rounds; r++) samples.push(await impl(n));
  process.stdout.write(`${JSON.stringify({ perOp: median(samples), samples })}\n`);
}

function runChild(name, n, rounds) {
  return childJson(["--expose-gc", "--max-semi-space-size=256", SELF, "--child", name, String(n), String(rounds)]);
}

export async function run(results, { B, bobbinError }) {
  const measureOne = async (c) => runChild(c.impl, c.n, 3);
  await runContenders(
    results,
    [
      { contender: "async/await (pending child Promise)", anchor: "async", impl: "pending-async", n: N },
      {
        contender: "Bobbin (queued child task)",
        impl: "pending-bobbin",
        n: N,
        error: B ? null : bobbinError,
        note: "the record alone: the run queue's and the parent's chunks that hold the children are subtracted",
        targetSpec: { against: "absolute", max: 72, text: "≤ 72 B" },
      },
    ],
    { scenario: SCENARIO, kind: "bytes", measureOne },
  );
  await runContenders(
    results,
    [
      { contender: "async/await (await of a settled Promise)", anchor: "async", impl: "await-async", n: N },
      {
        contender: "Bobbin (awaitExn of an ended child)",
        impl: "await-bobbin",
        n: N,
        error: B ? null : bobbinError,
        targetSpec: { against: "absolute", max: 0.5, text: "no allocation (0 B)" },
      },
    ],
    { scenario: AWAIT_SCENARIO, kind: "bytes", measureOne },
  );
}

if (process.argv[2] === "--child") {
  const [, , , name, n, rounds] = process.argv;
  childMain(name, Number(n), Number(rounds ?? 1)).catch((e) => {
    process.stderr.write(`${e?.stack ? e.stack : e}\n`);
    process.exit(1);
  });
}
