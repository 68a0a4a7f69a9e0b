import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { yieldTimes } from "./support/helpers.js";

describe("protect", () => {
  it("on cancellation: onCancellation, then the body unwinds, then finally(true)", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const t = B.spawn(function* () {
        yield* B.protect(
          {
            onCancellation: () => log.push("onCancellation"),
            finally: (cancelled) => log.push(`finally(${cancelled})`),
          },
          function* () {
            try {
              for (;;) yield* B.yieldNow();
            } finally {
              log.push("body unwinds");
            }
          },
        );
      });
      yield* yieldTimes(2);
      yield* B.cancel(t);
    });
    expect(log).toEqual(["onCancellation", "body unwinds", "finally(true)"]);
  });

  it("without cancellation: the value passes through and finally(false) runs", async () => {
    const log: string[] = [];
    const v = await B.run(function* () {
      return yield* B.protect(
        { finally: (c) => log.push(`finally(${c})`) },
        function* (n: number) {
          yield* B.yieldNow();
          return n + 1;
        },
        41,
      );
    });
    expect(v).toBe(42);
    expect(log).toEqual(["finally(false)"]);
  });

  it("finally runs when the body throws, and the error propagates", async () => {
    const log: string[] = [];
    await expect(
      B.run(function* () {
        yield* B.protect({ finally: (c) => log.push(`finally(${c})`), onCancellation: () => log.push("never") }, function* () {
          throw new Error("body failed");
        });
      }),
    ).rejects.toThrow("body failed");
    expect(log).toEqual(["finally(false)"]);
  });

  it("nested protections all hear the cancellation, innermost first", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const t = B.spawn(function* () {
        yield* B.protect({ onCancellation: () => log.push("outer") }, function* () {
          yield* B.protect({ onCancellation: () => log.push("inner") }, function* () {
            for (;;) yield* B.yieldNow();
          });
        });
      });
      yield* yieldTimes(2);
      yield* B.cancel(t);
    });
    expect(log).toEqual(["inner", "outer"]);
  });

  it("a protection that ended is not called on a later cancellation", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const t = B.spawn(function* () {
        yield* B.protect({ onCancellation: () => log.push("stale") }, function* () {});
        for (;;) yield* B.yieldNow();
      });
      yield* yieldTimes(2);
      yield* B.cancel(t);
    });
    expect(log).toEqual([]);
  });
});
