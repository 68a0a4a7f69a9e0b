/** The kernel outlives its run, for the maps of its records (see kernel/shapes.ts), but nothing the run made does. */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, it } from "vitest";
import * as B from "../../src/index.js";
import { keptKernel } from "../../src/kernel/shapes.js";

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
