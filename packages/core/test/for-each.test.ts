/** forEach and map: one task per item, at most `concurrency` at once. */
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { errorOf, settleOperation, yieldTimes } from "./support/helpers.js";

describe("map", () => {
  it("returns fn's values in the order of the items, whatever order they end in", async () => {
    const values = await B.run(function* () {
      return yield* B.map([3, 1, 2], function* (n, i) {
        yield* yieldTimes(n * 2);
        return `${i}:${n * 10}`;
      });
    });
    expect(values).toEqual(["0:30", "1:10", "2:20"]);
  });

  it("works on any iterable, and on none", async () => {
    expect(
      await settleOperation(
        B.map(new Set(["a", "b"]), function* (s) {
          return s.toUpperCase();
        }),
      ),
    ).toEqual({ ok: true, value: ["A", "B"] });
    expect(
      await settleOperation(
        B.map([], function* () {
          return 1;
        }),
      ),
    ).toEqual({ ok: true, value: [] });
  });

  it("runs at most `concurrency` items at once, starting them in order", async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    await B.run(function* () {
      yield* B.map(
        Array.from({ length: 20 }, (_, i) => i),
        function* item(n) {
          started.push(n);
          most = Math.max(most, ++running);
          yield* yieldTimes(1 + (n % 4));
          running--;
          return n;
        },
        { concurrency: 4 },
      );
    });
    expect(most).toBe(4);
    expect(started).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("makes an item's task only once a place under the limit is free for it (made early, it would wait, and be kept, for nothing)", async () => {
    let made = 0;
    const madeWhenStarted: number[] = [];
    const off = L.onSpawn((child) => {
      if (child.name === "item") made++;
    });
    try {
      await B.run(function* () {
        yield* B.forEach(
          Array.from({ length: 10 }, (_, i) => i),
          function* item() {
            madeWhenStarted.push(made);
            yield* B.yieldNow();
          },
          { concurrency: 2 },
        );
      });
    } finally {
      off();
    }
    expect(made).toBe(10);
    expect(madeWhenStarted[0]).toBe(2);
    for (const [k, n] of madeWhenStarted.entries()) expect(n).toBeLessThanOrEqual(k + 2);
  });

  it("names each task after fn", async () => {
    const names = await B.run(function* () {
      return yield* B.map([1, 2], function* double() {
        return B.self().name;
      });
    });
    expect(names).toEqual(["double", "double"]);
  });
});

describe("forEach", () => {
  it("the first failure cancels the running items; waiting items never start", async () => {
    const started: number[] = [];
    const cleaned: number[] = [];
    const boom = new Error("item 1");
    const r = await settleOperation(
      B.forEach(
        [0, 1, 2, 3, 4, 5],
        function* (n) {
          started.push(n);
          try {
            if (n === 1) throw boom;
            yield* new L.Trigger().wait();
          } finally {
            cleaned.push(n);
          }
        },
        { concurrency: 2 },
      ),
    );
    expect(errorOf(r)).toBe(boom);
    expect(started).toEqual([0, 1]);
    expect(cleaned.sort()).toEqual([0, 1]);
  });

  it("refuses what is not iterable, a body that is not a function, and a bad concurrency", async () => {
    const body = function* () {};
    expect(errorOf(await settleOperation(B.forEach(42 as never, body)))).toBeInstanceOf(TypeError);
    expect(errorOf(await settleOperation(B.forEach([1], "fn" as never)))).toBeInstanceOf(TypeError);
    for (const concurrency of [0, 2.5, -1, Number.NaN]) {
      expect(errorOf(await settleOperation(B.forEach([1], body, { concurrency })))).toBeInstanceOf(RangeError);
    }
    expect(await settleOperation(B.forEach([1], body, { concurrency: Number.POSITIVE_INFINITY }))).toEqual({ ok: true, value: undefined });
  });
});
