/**
 * Child processes started in worker domains. A worker's run ends when dom0's
 * does, and dom0 terminates a worker that has not stopped within the run's
 * `cancelGraceMs`: what the worker's processes do then decides whether they
 * outlive the run.
 */
import * as B from "@bobbin/core";
import { processGone as gone } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { run, sleep } from "../../dist/index.js";
import * as F from "./fixtures/tasks.mjs";

describe("processes of worker domains", () => {
  it("a process a worker still has when the run ends is killed and reaped before run settles, even one that ignores SIGTERM with a grace longer than the domain's", async () => {
    const flags = new SharedArrayBuffer(4);
    const pid = () => Atomics.load(new Int32Array(flags), 0);
    try {
      await run(
        function* () {
          const owner = B.call(F.stubbornChild, { grace: 30, flags });
          while (pid() === 0) yield* sleep(0.01);
          yield* B.cancel(owner); // its reaper sends SIGTERM (ignored) and would wait 30 s for SIGKILL
        },
        // The domain's grace only bounds how long a worker may take to stop, which a loaded machine
        // stretches (300 ms was too short to reap there); the child's 30 s stays far longer.
        { domains: 1, cancelGraceMs: 5000 },
      );
      expect(pid()).toBeGreaterThan(0);
      expect(gone(pid())).toBe(true);
    } finally {
      if (pid() > 0 && !gone(pid())) process.kill(pid(), "SIGKILL");
    }
  });
});
