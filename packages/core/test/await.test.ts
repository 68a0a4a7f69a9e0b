import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { errorOf, settle, yieldTimes } from "./support/helpers.js";

const value = function* <T>(v: T, yields = 0) {
  yield* yieldTimes(yields);
  return v;
};
const boom = function* (message: string, yields = 0): Generator<B.Instruction, never, unknown> {
  yield* yieldTimes(yields);
  throw new Error(message);
};

describe("awaitTask / awaitExn", () => {
  it("returns a Result, and awaitExn the value or the error", async () => {
    await B.run(function* () {
      expect(yield* B.awaitTask(B.spawn(value, 1))).toEqual({ ok: true, value: 1 });
      const r = yield* B.awaitTask(B.spawn(boom, "no"));
      expect(r.ok).toBe(false);
      expect(String((r as { error: unknown }).error)).toMatch("no");
      expect(yield* B.awaitExn(B.spawn(value, "x"))).toBe("x");
      let caught: unknown;
      try {
        yield* B.awaitExn(B.spawn(boom, "bad"));
      } catch (e) {
        caught = e;
      }
      expect(String(caught)).toMatch("bad");
    });
  });

  it("awaiting twice gives the same result", async () => {
    await B.run(function* () {
      const t = B.spawn(value, 7, 2);
      expect(yield* B.awaitExn(t)).toBe(7);
      expect(yield* B.awaitExn(t)).toBe(7);
      expect(yield* B.awaitTask(t)).toEqual({ ok: true, value: 7 });
    });
  });

  it("awaitAll returns results in the order of the tasks, not of their ending", async () => {
    const results = await B.run(function* () {
      return yield* B.awaitAll([B.spawn(value, "slow", 5), B.spawn(boom, "mid", 2), B.spawn(value, "fast", 0)]);
    });
    expect(results.map((r) => (r.ok ? r.value : String(r.error)))).toEqual(["slow", "Error: mid", "fast"]);
    expect(
      await B.run(function* () {
        return yield* B.awaitAll([]);
      }),
    ).toEqual([]);
  });

  it("awaitOne returns the first to end and leaves the others running", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const slow = B.spawn(function* () {
        yield* yieldTimes(5);
        log.push("slow ended");
        return "slow";
      });
      const fast = B.spawn(value, "fast", 1);
      const first = yield* B.awaitOne([slow, fast]);
      expect(first).toEqual({ ok: true, value: "fast" });
      expect(slow.status).toBe("pending");
      expect(yield* B.awaitExn(slow)).toBe("slow");
    });
    expect(log).toEqual(["slow ended"]);
  });

  it("awaitFirst cancels and consumes the others", async () => {
    let loserCleanedUp = false;
    await B.run(function* () {
      const loser = B.spawn(function* () {
        try {
          yield* yieldTimes(1000);
        } finally {
          loserCleanedUp = true;
        }
      });
      const winner = B.spawn(value, "win", 1);
      expect(yield* B.awaitFirst([loser, winner])).toEqual({ ok: true, value: "win" });
      expect(loserCleanedUp).toBe(true);
      expect(loser.status).toBe("cancelled");
      // consumed: returning now does not raise StillHasChildren
    });
  });

  it("awaitFirst prefers a success among tasks that have already ended", async () => {
    for (let seed = 0; seed < 20; seed++) {
      const r = await B.run(
        function* () {
          const ts = [B.spawn(boom, "a"), B.spawn(value, "ok"), B.spawn(boom, "b")];
          yield* yieldTimes(2);
          return yield* B.awaitFirst(ts);
        },
        { seed },
      );
      expect(r).toEqual({ ok: true, value: "ok" });
    }
  });

  it("awaitOne and awaitFirst refuse an empty list", async () => {
    for (const op of [() => B.awaitOne([]), () => B.awaitFirst([])]) {
      const error = errorOf(
        await settle(function* () {
          yield* op();
        }),
      );
      expect(error).toBeInstanceOf(RangeError);
    }
  });

  it("a task listed twice is awaited once and its result reported at each of its places", async () => {
    await B.run(function* () {
      const t = B.spawn(value, "t", 2);
      const u = B.spawn(value, "u", 4);
      expect(yield* B.awaitAll([t, t, u])).toEqual([
        { ok: true, value: "t" },
        { ok: true, value: "t" },
        { ok: true, value: "u" },
      ]);
      const v = B.spawn(value, "v", 1);
      const w = B.spawn(value, "w", 50);
      expect(yield* B.awaitFirst([v, w, w])).toEqual({ ok: true, value: "v" });
      expect(w.status).toBe("cancelled");
      const x = B.spawn(value, "x", 1);
      expect(yield* B.awaitOne([x, x])).toEqual({ ok: true, value: "x" });
    });
  });

  it("awaitAll is typed position by position", async () => {
    await B.run(function* () {
      const [n, s] = yield* B.awaitAll([B.spawn(value, 1, 0), B.spawn(value, "one", 0)]);
      const count: number = n.ok ? n.value : 0;
      const word: string = s.ok ? s.value : "";
      expect([count, word]).toEqual([1, "one"]);
    });
  });

  it("awaiting something that is not a task names what it got", async () => {
    await B.run(function* () {
      expect(() =>
        B.awaitTask("t" as never)
          [Symbol.iterator]()
          .next(),
      ).toThrow(/expects a task made by B.spawn or B.call, got "t"/);
    });
  });

  it("the seed decides ties between ended tasks", async () => {
    const pick = (seed: number) =>
      B.run(
        function* () {
          const ts = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => B.spawn(value, i));
          yield* B.yieldNow();
          const r = yield* B.awaitOne(ts);
          yield* B.awaitAll(ts);
          return r.ok ? r.value : -1;
        },
        { seed },
      );
    const picks = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(pick));
    expect(await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(pick))).toEqual(picks);
    expect(new Set(picks).size).toBeGreaterThan(1);
  });
});
