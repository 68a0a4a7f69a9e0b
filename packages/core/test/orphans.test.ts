import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { coldOf } from "../src/kernel/tree.js";
import { errorOf, settle, yieldTimes } from "./support/helpers.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

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

  it("take hands over a held task at once, in whatever state, and undefined when empty (Miou's take)", async () => {
    await B.run(function* () {
      const bg = B.orphans<number>();
      expect(B.take(bg)).toBeUndefined();
      const first = B.spawn({ orphans: bg }, job, 5);
      const second = B.spawn({ orphans: bg }, job, 0);
      expect(bg.size).toBe(2);
      const taken = B.take(bg);
      expect(taken).toBe(first);
      expect(taken!.status).toBe("pending");
      expect(bg.size).toBe(1);
      yield* yieldTimes(2);
      expect(second.status).toBe("resolved");
      expect(B.take(bg)).toBe(second);
      expect(B.take(bg)).toBeUndefined();
      // The caller owns what it took: awaited here, or StillHasChildren.
      expect(yield* B.awaitExn(taken!)).toBe(5);
      expect(yield* B.awaitExn(second)).toBe(0);
    });
  });

  it("a taken task is no longer the collector's: care never hands it out again", async () => {
    await B.run(function* () {
      const bg = B.orphans<number>();
      const t = B.spawn({ orphans: bg }, job, 0);
      yield* yieldTimes(2);
      expect(B.take(bg)).toBe(t);
      expect(B.care(bg)).toBeUndefined();
      yield* B.awaitExn(t);
    });
  });

  it("a task's collectors each hand out only their own tasks, and none a plain child or a task taken from it", async () => {
    await B.run(function* () {
      const fast = B.orphans<number>();
      const slow = B.orphans<number>();
      const taken = B.spawn({ orphans: slow }, job, 0);
      B.spawn({ orphans: slow }, job, 8);
      expect(B.take(slow) === taken).toBe(true);
      B.spawn({ orphans: fast }, job, 1);
      const plain = B.spawn(job, 0);
      // fast's task, the plain child and the taken one end first: slow's get hears none of them.
      const r = yield* B.get(slow);
      expect(r).toEqual({ ok: true, value: 8 });
      expect(fast.size).toBe(1);
      expect(yield* B.awaitExn(B.care(fast)!)).toBe(1);
      expect(B.care(slow)).toBeUndefined();
      expect(yield* B.awaitExn(plain)).toBe(0);
      expect(yield* B.awaitExn(taken)).toBe(0);
    });
  });

  it("a task keeps none of the collectors it emptied: one made per batch of work is not kept for the task's life", async () => {
    await B.run(function* () {
      for (let batch = 0; batch < 50; batch++) {
        const bg = B.orphans<number>();
        B.spawn({ orphans: bg }, job, 1);
        B.spawn({ orphans: bg }, job, 0);
        expect(yield* B.drain(bg)).toHaveLength(2);
      }
      const kept = B.orphans<number>();
      B.spawn({ orphans: kept }, job, 1);
      const collectors = coldOf(B.self())?.collectors;
      expect(collectors?.length).toBe(1);
      expect(collectors?.[0] === kept).toBe(true);
      expect((yield* B.get(kept))?.ok).toBe(true);
      // Emptied, then used again: it hears of its new task's end.
      B.spawn({ orphans: kept }, job, 0);
      expect(yield* B.get(kept)).toEqual({ ok: true, value: 0 });
    });
  });

  it("get waits for one task to end and returns its result, consumed; undefined when empty (Miou's get)", async () => {
    await B.run(function* () {
      const bg = B.orphans<number>();
      expect(yield* B.get(bg)).toBeUndefined();
      for (const n of [5, 1, 3]) B.spawn({ orphans: bg }, job, n);
      const seen: number[] = [];
      for (let r = yield* B.get(bg); r !== undefined; r = yield* B.get(bg)) seen.push(r.ok ? r.value : -1);
      expect(seen).toEqual([1, 3, 5]);
      expect(bg.size).toBe(0);
    });
  });

  it("get leaves the other tasks running and prefers a success among those that ended", async () => {
    for (let seed = 0; seed < 10; seed++) {
      await B.run(
        function* () {
          const bg = B.orphans<string>();
          const slow = B.spawn({ orphans: bg }, function* () {
            yield* yieldTimes(50);
            return "slow";
          });
          B.spawn({ orphans: bg }, function* () {
            throw new Error("boom");
          });
          B.spawn({ orphans: bg }, function* () {
            return "ok";
          });
          yield* yieldTimes(2);
          expect(yield* B.get(bg)).toEqual({ ok: true, value: "ok" });
          expect(slow.status).toBe("pending");
          const failure = yield* B.get(bg);
          expect(failure?.ok).toBe(false);
          expect(yield* B.get(bg)).toEqual({ ok: true, value: "slow" });
        },
        { seed },
      );
    }
  });

  it("drain waits for every task and returns every result", async () => {
    const results = await B.run(function* () {
      const bg = B.orphans<number>();
      for (const n of [2, 0, 1]) B.spawn({ orphans: bg }, job, n);
      return yield* B.drain(bg);
    });
    expect(results.map((r) => (r.ok ? r.value : -1)).sort()).toEqual([0, 1, 2]);
  });

  it("keeps no task it handed out: batches drained one after another stay collectable", async () => {
    const collected = await B.run(function* () {
      const bg = B.orphans<number[]>();
      const body = function* () {
        return new Array<number>(1000).fill(1);
      };
      const refs = yield* (function* () {
        const made: WeakRef<B.Task<number[]>>[] = [];
        // Each batch ends together, so that get hands out all but the first from the ended ones.
        for (let batch = 0; batch < 3; batch++) {
          for (let i = 0; i < 8; i++) made.push(new WeakRef(B.spawn({ orphans: bg }, body)));
          expect((yield* B.drain(bg)).length).toBe(8);
        }
        return made;
      })();
      // A later macrotask: a WeakRef's target is kept until the job that made it ends.
      return yield* B.promise(
        () =>
          new Promise<number>((resolve) =>
            setTimeout(() => {
              gc();
              resolve(refs.filter((ref) => ref.deref() === undefined).length);
            }, 0),
          ),
      );
    });
    expect(collected).toBe(24);
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
          yield* B.drain(bg);
        }
      }),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toMatch(/only the first task/);
  });

  it("a task cancelled while in get leaves the collector usable", async () => {
    await B.run(function* () {
      const waiter = B.spawn(function* () {
        const bg = B.orphans<number>();
        B.spawn({ orphans: bg }, job, 50);
        try {
          yield* B.get(bg);
        } finally {
          // Still usable after the cancelled get: its task is found again.
          expect(bg.size).toBe(1);
          const t = B.take(bg)!;
          yield* B.cancel(t);
        }
      });
      yield* yieldTimes(2);
      yield* B.cancel(waiter);
      expect(waiter.status).toBe("cancelled");
    });
  });

  it("a get cancelled while it waits leaves the collector: a task that ends later stays there for care", async () => {
    await B.run(function* () {
      const waiter = B.spawn(function* () {
        const bg = B.orphans<number>();
        B.spawn({ orphans: bg }, job, 3);
        try {
          yield* B.get(bg);
        } finally {
          // The background task ends here, with no get waiting for it any more.
          yield* yieldTimes(6);
          const ended = B.care(bg);
          expect(ended?.status).toBe("resolved");
          yield* B.awaitExn(ended!);
        }
      });
      yield* B.yieldNow();
      yield* B.cancel(waiter);
      expect(waiter.status).toBe("cancelled");
    });
  });
});
