import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { errorOf, settle, yieldTimes } from "./support/helpers.js";

describe("Trigger", () => {
  it("wakes the task waiting on it", async () => {
    await B.run(function* () {
      const t = new L.Trigger();
      const waiter = B.spawn(function* () {
        yield* t.wait();
        return "woken";
      });
      yield* B.yieldNow();
      expect(t.isAwaited).toBe(true);
      expect(t.signal()).toBe(true);
      expect(yield* B.awaitExn(waiter)).toBe("woken");
    });
  });

  it("signalled first, the wait returns at once; signalling twice does nothing", async () => {
    await B.run(function* () {
      const t = new L.Trigger();
      expect(t.signal()).toBe(false);
      expect(t.signal()).toBe(false);
      expect(t.isSignalled).toBe(true);
      yield* t.wait();
    });
  });

  it("can be signalled from a Node callback", async () => {
    await B.run(function* () {
      const t = new L.Trigger();
      setTimeout(() => t.signal(), 2);
      yield* t.wait();
    });
  });

  it("a cancelled waiter leaves; the trigger stays unsignalled and signal() says nobody was woken", async () => {
    await B.run(function* () {
      const t = new L.Trigger();
      const waiter = B.spawn(function* () {
        yield* t.wait();
      });
      yield* B.yieldNow();
      yield* B.cancel(waiter);
      expect(t.isAwaited).toBe(false);
      expect(t.isSignalled).toBe(false);
      expect(t.signal()).toBe(false);
    });
  });

  it("a waiter woken before its cancellation arrives returns normally, then sees Cancelled", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const t = new L.Trigger();
      const waiter = B.spawn(function* () {
        yield* t.wait();
        log.push("wait returned");
        try {
          yield* B.yieldNow();
        } catch (e) {
          log.push((e as Error).name);
          throw e;
        }
      });
      yield* B.yieldNow();
      t.signal();
      yield* B.cancel(waiter);
    });
    expect(log).toEqual(["wait returned", "Cancelled"]);
  });

  it("wakes one task only", async () => {
    const error = errorOf(
      await settle(function* () {
        const t = new L.Trigger();
        const a = B.spawn(function* () {
          yield* t.wait();
        });
        const b = B.spawn(function* () {
          yield* t.wait();
        });
        try {
          yield* B.awaitExn(b);
        } finally {
          t.signal();
          yield* B.awaitTask(a);
        }
      }),
    );
    expect(error).toBeInstanceOf(TypeError);
  });

  it("parks many fibers cheaply", async () => {
    const n = 10_000;
    await B.run(function* () {
      const triggers = Array.from({ length: n }, () => new L.Trigger());
      const tasks = triggers.map((t) =>
        B.spawn(function* () {
          yield* t.wait();
        }),
      );
      yield* yieldTimes(1);
      for (const t of triggers) t.signal();
      const results = yield* B.awaitAll(tasks);
      expect(results.every((r) => r.ok)).toBe(true);
    });
  });
});
