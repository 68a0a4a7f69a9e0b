import { describe, expect, it } from "vitest";
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";
import { caught, yieldTimes } from "../support/helpers.js";

/** A chain of `depth` tasks, each awaiting the next; the last one runs `bottom`. */
function* chain(
  depth: number,
  counters: { finallies: number },
  bottom: () => B.Operation<string>,
): Generator<B.Instruction, string, unknown> {
  try {
    if (depth === 0) return yield* bottom();
    return yield* B.awaitExn(B.spawn(chain, depth - 1, counters, bottom));
  } finally {
    counters.finallies++;
  }
}

const DEPTH = 100_000;

describe("ending", () => {
  it("a cancelled task that ends in the step that delivers its Cancelled makes no cold record (only one still running after it is watched)", async () => {
    await B.run(function* () {
      const quick = B.spawn(function* () {
        for (;;) yield* B.yieldNow();
      });
      const slow = B.spawn(function* () {
        try {
          for (;;) yield* B.yieldNow();
        } finally {
          yield* B.yieldNow();
        }
      });
      yield* B.yieldNow();
      yield* B.cancel(quick);
      yield* B.cancel(slow);
      expect(quick.family).toBeNull();
      expect(slow.family).not.toBeNull();
    });
  });

  it(`a ${DEPTH.toLocaleString("en")}-deep chain that returns settles and runs every finally`, async () => {
    const counters = { finallies: 0 };
    const value = await B.run(function* () {
      return yield* chain(DEPTH, counters, function* () {
        yield* B.yieldNow();
        return "bottom";
      });
    });
    expect(value).toBe("bottom");
    expect(counters.finallies).toBe(DEPTH + 1);
  });

  it(`a ${DEPTH.toLocaleString("en")}-deep chain that is cancelled settles and runs every finally`, async () => {
    const counters = { finallies: 0 };
    let reachedBottom = false;
    const status = await B.run(function* () {
      const top = B.spawn(chain, DEPTH, counters, function* () {
        reachedBottom = true;
        yield* new L.Trigger().wait();
        return "never";
      });
      while (!reachedBottom) yield* B.yieldNow();
      yield* B.cancel(top);
      return top.status;
    });
    expect(status).toBe("cancelled");
    expect(counters.finallies).toBe(DEPTH + 1);
  });

  it("a failing task's children end before it does, whatever the depth (ending climbs in a loop)", async () => {
    const order: string[] = [];
    const error = await B.run(function* () {
      const parent = B.spawn(function* () {
        B.spawn(function* () {
          try {
            yield* new L.Trigger().wait();
          } finally {
            order.push("child");
          }
        });
        yield* B.yieldNow();
        throw new Error("parent failed");
      });
      const r = yield* B.awaitTask(parent);
      order.push("parent ended");
      return r.ok ? null : (r.error as Error).message;
    });
    expect(error).toBe("parent failed");
    expect(order).toEqual(["child", "parent ended"]);
  });

  it("a task cancelled while it ends (its body failed, a child still cleaning up) keeps its error: cancel throws it", async () => {
    const seen = await B.run(function* () {
      const parent = B.spawn(function* () {
        B.spawn(function* () {
          try {
            yield* new L.Trigger().wait();
          } finally {
            yield* yieldTimes(3);
          }
        });
        yield* B.yieldNow();
        throw new Error("parent failed");
      });
      yield* yieldTimes(2);
      const ending = parent.status;
      const error = (yield* caught(B.cancel(parent))) as Error;
      return [ending, parent.status, error.message];
    });
    expect(seen).toEqual(["pending", "failed", "parent failed"]);
  });
});
