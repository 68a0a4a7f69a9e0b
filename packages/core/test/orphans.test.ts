import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { errorOf, settle, yieldTimes } from "./support/helpers.js";

const job = function* (n: number) {
  yield* yieldTimes(n);
  return n;
};

describe("orphans", () => {
  it("care: undefined when empty, null when none ended yet, then the ended task", async () => {
    await B.run(function* () {
      const bg = B.orphans<number>();
      expect(B.care(bg)).toBeUndefined();
      B.spawn({ orphans: bg }, job, 3);
      expect(B.care(bg)).toBeNull();
      yield* yieldTimes(6);
      const t = B.care(bg);
      expect(t).toBeInstanceOf(B.Task);
      expect(yield* B.awaitExn(t!)).toBe(3);
      expect(B.care(bg)).toBeUndefined();
    });
  });

  it("take waits for the next task to end, in the order they end", async () => {
    const order = await B.run(function* () {
      const bg = B.orphans<number>();
      for (const n of [5, 1, 3]) B.spawn({ orphans: bg }, job, n);
      const seen: number[] = [];
      for (let t = yield* B.take(bg); t !== undefined; t = yield* B.take(bg)) seen.push(yield* B.awaitExn(t));
      return seen;
    });
    expect(order).toEqual([1, 3, 5]);
  });

  it("get drains the collector and returns every result", async () => {
    const results = await B.run(function* () {
      const bg = B.orphans<number>();
      for (const n of [2, 0, 1]) B.spawn({ orphans: bg }, job, n);
      return yield* B.get(bg);
    });
    expect(results.map((r) => (r.ok ? r.value : -1)).sort()).toEqual([0, 1, 2]);
  });

  it("a forgotten orphan is still a forgotten child", async () => {
    const error = errorOf(
      await settle(function* () {
        B.spawn({ orphans: B.orphans() }, job, 0);
        yield* yieldTimes(3);
      }),
    );
    expect(error).toBeInstanceOf(B.StillHasChildren);
  });

  it("only the first task that uses a collector may use it", async () => {
    const error = errorOf(
      await settle(function* () {
        const bg = B.orphans<number>();
        B.spawn({ orphans: bg }, job, 0);
        const other = B.spawn(function* () {
          B.care(bg);
        });
        try {
          yield* B.awaitExn(other);
        } finally {
          yield* B.get(bg);
        }
      }),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toMatch(/only the first task/);
  });

  it("a task cancelled while in take leaves the collector usable", async () => {
    await B.run(function* () {
      const bg = B.orphans<number>();
      const waiter = B.spawn(function* () {
        B.spawn({ orphans: bg }, job, 50);
        try {
          yield* B.take(bg);
        } finally {
          expect(bg.waiting).toBeNull();
        }
      });
      yield* yieldTimes(2);
      yield* B.cancel(waiter);
      expect(waiter.status).toBe("cancelled");
    });
  });
});
