// The guard that keeps a shared descriptor valid while other domains duplicate it.
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { ShareGuard } from "../../src/backend/index.js";

describe("ShareGuard", () => {
  it("pins until sealed; a sealed guard refuses new pins", () => {
    const guard = new ShareGuard();
    expect(guard.pin()).toBe(true);
    guard.unpin();
    expect(guard.sealed).toBe(false);
    guard.seal();
    expect(guard.sealed).toBe(true);
    expect(ShareGuard.of(guard.buffer).pin()).toBe(false);
    expect(() => ShareGuard.of(new ArrayBuffer(4) as unknown as SharedArrayBuffer)).toThrow(TypeError);
  });

  it("seal waits for a duplication in progress in another thread", async () => {
    const guard = new ShareGuard();
    const worker = new Worker(
      `const { workerData, parentPort } = require("node:worker_threads");
       const cell = new Int32Array(workerData);
       Atomics.add(cell, 0, 1);                         // pinned…
       parentPort.postMessage("pinned");
       const until = Date.now() + 60; while (Date.now() < until);
       Atomics.sub(cell, 0, 1); Atomics.notify(cell, 0); // …and unpinned 60 ms later`,
      { eval: true, workerData: guard.buffer },
    );
    await new Promise((resolve) => worker.once("message", resolve));
    const t0 = performance.now();
    guard.seal();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(30);
    await new Promise((resolve) => worker.once("exit", resolve));
  });
});
