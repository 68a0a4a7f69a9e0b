/**
 * No error vanishes across domains: a parallel task whose cleanup fails when
 * it is cancelled fails with that error, which crosses back to the task that
 * cancelled it. Workers run plain JavaScript: these tests use the built
 * package and `fixtures/cleanup-tasks.mjs`.
 */
import { describe, expect, it } from "vitest";
import * as B from "../dist-dev/index.js";
import * as F from "./fixtures/cleanup-tasks.mjs";

/** Waits (polling, as the worker raises the flag from another thread) until `flags[0]` is set. */
function* parkedThere(flags: SharedArrayBuffer): Generator<B.Instruction, void, unknown> {
  const view = new Int32Array(flags);
  while (Atomics.load(view, 0) === 0) yield* B.promise(() => new Promise((resolve) => setTimeout(resolve, 5)));
}

describe("a parallel task whose cleanup fails when it is cancelled", () => {
  it("fails with that error: cancel throws it in the caller's domain", async () => {
    const seen = await B.run(
      function* () {
        const flags = new SharedArrayBuffer(4);
        const t = B.call(F.closesBadly, flags);
        yield* parkedThere(flags);
        let error: unknown = null;
        try {
          yield* B.cancel(t);
        } catch (e) {
          error = e;
        }
        return { error, status: t.status };
      },
      { domains: 1 },
    );
    expect(seen.status).toBe("failed");
    expect(seen.error).toBeInstanceOf(RangeError);
    expect((seen.error as Error).message).toBe("close failed in a worker");
  });

  it("reaches dom0 through a nested call, and fails the run when nobody catches it", async () => {
    const run = B.run(
      function* () {
        const flags = new SharedArrayBuffer(4);
        const t = B.call(F.callsOneThatClosesBadly, flags);
        yield* parkedThere(flags);
        yield* B.cancel(t);
      },
      { domains: 2 },
    );
    const error = await run.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toBe("close failed in a worker");
  });
});
