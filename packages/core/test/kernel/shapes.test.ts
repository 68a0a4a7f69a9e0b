/** The kernel outlives its run, for the maps of its records (see kernel/shapes.ts), but nothing the run made does. */

import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, it } from "vitest";
import * as B from "../../src/index.js";
import { keptKernel, keptShapes } from "../../src/kernel/shapes.js";
import { runNode } from "../support/processes.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

it("a settled run's kernel is kept, its result is not: the value it returned is collected once the program drops it", async () => {
  const before = keptKernel();
  let ref: WeakRef<object> | null = null;
  await (async () => {
    const value = await B.run(function* () {
      return { rows: new Array(1000).fill(1) };
    });
    ref = new WeakRef(value);
  })();
  const kept = keptKernel();
  expect(kept).not.toBeNull();
  expect(kept).not.toBe(before); // this run's kernel, in place of the one before
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  expect(ref!.deref()).toBeUndefined();
});

it("the built package keeps it too: a full collection after the run leaves the kernel (and the code compiled against its maps)", async () => {
  // The build drops a module variable that nothing in it reads: a kernel kept in one was collected.
  const program = fileURLToPath(new URL("../fixtures/kept-kernel.mjs", import.meta.url));
  const r = await runNode(["--expose-gc", program]);
  expect(r.stderr).toBe("");
  expect(r.stdout.trim()).toBe("kept");
});

it("a full collection between runs of the built package throws away none of the code the runs made hot", async () => {
  // Without a kept kernel and a kept await, each collection threw away spawn, the step, the end of a
  // task and the program's own loop (which inlines them), and the next run ran them unoptimised.
  const program = fileURLToPath(new URL("../fixtures/gc-between-runs.mjs", import.meta.url));
  // Optimised on the main thread when marked: a background compile can be starved past the last run
  // on a loaded machine, and the check below would then have nothing to check.
  const flags = ["--expose-gc", "--trace-opt", "--trace-deopt", "--no-concurrent-recompilation"];
  const r = await runNode([...flags, program], { timeoutMs: 60_000 });
  expect(r.code).toBe(0);
  const lines = r.stdout.split("\n");
  const afterFirst = lines.slice(lines.indexOf("collected 0") + 1);
  expect(afterFirst.length).toBeLessThan(lines.length);
  // The check means something only once the kernel's code is optimised.
  expect(lines.some((l) => l.startsWith("[completed compiling") && l.includes("<JSFunction spawn "))).toBe(true);
  expect(afterFirst.filter((l) => l.includes("reason: weak objects"))).toEqual([]);
});

setFlagsFromString("--allow-natives-syntax");
const sameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;

/** The records a request of a scatter-gather program makes: its children's family, a cancel, its Cancelled, an await, a group. */
function recordsOfOneRun(): Promise<Record<string, object>> {
  const records: Record<string, object> = {};
  return B.run(function* () {
    const forever = function* () {
      for (;;) yield* B.yieldNow();
    };
    const a = B.spawn(forever);
    const b = B.spawn(function* () {
      try {
        yield* forever();
      } finally {
        yield* B.yieldNow(); // a step after its cancel: it is watched for swallowing it
      }
    });
    yield* B.yieldNow(); // both have started: the cancel is thrown into them where they yield
    const op = B.cancel(a);
    records.cancel = op;
    yield* op;
    records.family = B.self().family as object;
    const outcome = yield* B.awaitTask(a);
    records.cancelled = (outcome as { error: object }).error;
    yield* B.cancel(b);
    records["the family of a task cleaning up after its cancel"] = b.family as object;
    const child = B.spawn(function* () {
      yield* B.yieldNow();
    });
    const waiting = B.awaitTask(child); // parks: the child has not run yet
    yield* waiting;
    records.await = waiting;
    yield* B.group(function* (g) {
      records.group = g;
      records.crew = (g as unknown as { crew: object }).crew;
    });
    return records;
  });
}

it("the records of spawns, cancels, awaits and groups have the maps of objects kept for the life of the program, so a full GC does not throw away code compiled against them", async () => {
  await recordsOfOneRun(); // the records of a first run, dropped
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  const records = await recordsOfOneRun();
  const unkept = Object.keys(records).filter((what) => !keptShapes().some((k) => sameMap(k, records[what]!)));
  expect(unkept).toEqual([]);
});
