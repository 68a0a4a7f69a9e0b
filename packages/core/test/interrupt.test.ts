import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { ManualEvents, sleepMs } from "./support/helpers.js";

class Timeout extends Error {}

describe("interrupt", () => {
  it("throws the error where the task waits, without cancelling it", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const t = B.spawn(function* () {
        try {
          yield* new L.Trigger().wait();
        } catch (e) {
          log.push(e instanceof Timeout ? "timeout" : String(e));
        }
        yield* B.yieldNow();
        return "went on";
      });
      yield* B.yieldNow();
      expect(L.interrupt(t, new Timeout())).toBe(true);
      expect(yield* B.awaitExn(t)).toBe("went on");
    });
    expect(log).toEqual(["timeout"]);
  });

  it("interrupts a Promise wait from a timer, aborting its signal", async () => {
    let aborted = false;
    await B.run(function* () {
      const me = B.self();
      setTimeout(() => L.interrupt(me, new Timeout()), 5);
      let caught: unknown;
      try {
        yield* B.promise((signal) => {
          signal.addEventListener("abort", () => (aborted = true));
          return new Promise(() => {});
        });
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(Timeout);
      yield* sleepMs(1);
    });
    expect(aborted).toBe(true);
  });

  it("reports an abandoned syscall as cancelled, once", async () => {
    const events = new ManualEvents();
    let uid = -1;
    await L.runKernel(
      function* () {
        const t = B.spawn(function* () {
          const s = L.syscall();
          uid = L.uid(s);
          try {
            yield* L.suspend(s);
          } catch {
            return "interrupted";
          }
          return "signalled";
        });
        yield* B.yieldNow();
        L.interrupt(t, new Timeout());
        expect(yield* B.awaitExn(t)).toBe("interrupted");
        const next = L.syscall();
        events.ready.push(next);
        yield* L.suspend(next);
      },
      { events: () => events },
    );
    expect(events.selects.flatMap((s) => s.cancelled)).toEqual([uid]);
  });

  it("does nothing to a task that is not suspended", async () => {
    await B.run(function* () {
      const t = B.spawn(function* () {
        return 1;
      });
      expect(L.interrupt(t, new Timeout())).toBe(false); // queued, not started
      yield* B.awaitExn(t);
      expect(L.interrupt(t, new Timeout())).toBe(false); // ended
      expect(L.interrupt(B.self(), new Timeout())).toBe(false); // running
      expect(() => L.interrupt({} as B.Task, new Timeout())).toThrow(TypeError);
    });
  });
});

describe("currentEvents", () => {
  it("is null outside any task, without throwing (a simulation's clock asks it between steps)", () => {
    expect(L.currentEvents()).toBeNull();
  });

  it("is the current domain's backend, or null", async () => {
    const events = new ManualEvents();
    expect(
      await L.runKernel(
        function* () {
          return L.currentEvents();
        },
        { events: () => events },
      ),
    ).toBe(events);
    expect(
      await B.run(function* () {
        return L.currentEvents();
      }),
    ).toBeNull();
  });
});
