import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";

describe("park and unpark", () => {
  it("unpark wakes the task parked by park, and says so", async () => {
    await B.run(function* () {
      const waiter = B.spawn(function* () {
        yield* L.park();
        return "woken";
      });
      yield* B.yieldNow();
      expect(waiter.status).toBe("pending");
      expect(L.unpark(waiter)).toBe(true);
      expect(L.unpark(waiter)).toBe(false); // woken already: ready, not parked
      expect(yield* B.awaitExn(waiter)).toBe("woken");
    });
  });

  it("an unpark that came first lets one park through; several do not add up", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const me = B.self();
      expect(L.unpark(me)).toBe(false);
      expect(L.unpark(me)).toBe(false);
      yield* L.park();
      log.push("through");
      const waker = B.spawn(function* () {
        log.push("waker runs");
        expect(L.unpark(me)).toBe(true);
      });
      yield* L.park(); // the permit was taken: this one parks until the waker
      log.push("woken");
      yield* B.awaitExn(waker);
    });
    expect(log).toEqual(["through", "waker runs", "woken"]);
  });

  it("wakes from a Node callback, outside any step", async () => {
    await B.run(function* () {
      const me = B.self();
      let woke: boolean | undefined;
      setTimeout(() => {
        woke = L.unpark(me);
      }, 2);
      yield* L.park();
      expect(woke).toBe(true);
    });
  });

  it("wakes each task in its own run when two runs park at once", async () => {
    const handles: B.Task[] = [];
    const both = Promise.all(
      [1, 2].map((n) =>
        B.run(function* () {
          handles.push(B.self());
          yield* L.park();
          return n;
        }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 2));
    expect(handles.map((t) => L.unpark(t))).toEqual([true, true]);
    expect(await both).toEqual([1, 2]);
  });

  it("a task parked on something else keeps waiting: the unpark is kept for its next park", async () => {
    await B.run(function* () {
      const t = new L.Trigger();
      const log: string[] = [];
      const waiter = B.spawn(function* () {
        yield* t.wait();
        log.push("trigger");
        yield* L.park();
        log.push("park returned at once");
      });
      yield* B.yieldNow();
      expect(L.unpark(waiter)).toBe(false);
      yield* B.yieldNow();
      expect(log).toEqual([]);
      t.signal();
      yield* B.awaitExn(waiter);
      expect(log).toEqual(["trigger", "park returned at once"]);
    });
  });

  it("a parked task is cancelled like any waiter; unpark then wakes nobody", async () => {
    await B.run(function* () {
      let cleaned = false;
      const waiter = B.spawn(function* () {
        try {
          yield* L.park();
        } finally {
          cleaned = true;
        }
      });
      yield* B.yieldNow();
      yield* B.cancel(waiter);
      expect(cleaned).toBe(true);
      expect(waiter.status).toBe("cancelled");
      expect(L.unpark(waiter)).toBe(false);
    });
  });

  it("an interrupted park throws the error and can park again", async () => {
    await B.run(function* () {
      const waiter = B.spawn(function* () {
        try {
          yield* L.park();
        } catch (error) {
          expect((error as Error).message).toBe("stop waiting");
        }
        yield* L.park();
        return "second park woken";
      });
      yield* B.yieldNow();
      expect(L.interrupt(waiter, new Error("stop waiting"))).toBe(true);
      yield* B.yieldNow();
      expect(L.unpark(waiter)).toBe(true);
      expect(yield* B.awaitExn(waiter)).toBe("second park woken");
    });
  });

  it("a dump says what a parked task waits on", async () => {
    await B.run(function* () {
      const waiter = B.spawn(function* sleeper() {
        yield* L.park();
      });
      yield* B.yieldNow();
      const dump = B.formatDump(yield* B.promise(() => B.dump()));
      expect(dump).toMatch(/sleeper#2 — waiting(, [\d.]+ m?s)?: L\.park \(until L\.unpark wakes it\)/);
      L.unpark(waiter);
      yield* B.awaitExn(waiter);
    });
  });

  it("says what is wrong with a bad argument, and where park may be used", () => {
    expect(() => L.unpark({} as B.Task)).toThrow(/unpark\(task\) expects a task, got/);
    expect(() => L.park()[Symbol.iterator]().next()).toThrow(/park\(\) must be called from inside a task/);
  });
});
