import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { sleepMs, yieldTimes } from "./support/helpers.js";

describe("promise", () => {
  it("waits for a Promise and returns its value, or throws its reason", async () => {
    await B.run(function* () {
      expect(yield* B.promise(() => Promise.resolve(5))).toBe(5);
      expect(yield* B.promise(() => 6)).toBe(6);
      let caught: unknown;
      try {
        yield* B.promise(() => Promise.reject(new Error("nope")));
      } catch (e) {
        caught = e;
      }
      expect(String(caught)).toMatch("nope");
    });
  });

  it("aborts its signal when the task is cancelled", async () => {
    let aborted = false;
    await B.run(function* () {
      const t = B.spawn(function* () {
        yield* B.promise((signal) => {
          signal.addEventListener("abort", () => (aborted = true));
          return new Promise(() => {});
        });
      });
      yield* yieldTimes(2);
      yield* B.cancel(t);
      expect(t.status).toBe("cancelled");
    });
    expect(aborted).toBe(true);
  });

  it("abortSignal(task) aborts with Cancelled when the task is cancelled", async () => {
    let reason: unknown;
    await B.run(function* () {
      const t = B.spawn(function* () {
        B.abortSignal().addEventListener("abort", function (this: AbortSignal) {
          reason = this.reason;
        });
        yield* sleepMs(10_000);
      });
      yield* yieldTimes(2);
      yield* B.cancel(t);
      expect(B.abortSignal(t).aborted).toBe(true);
    });
    expect(reason).toBeInstanceOf(B.Cancelled);
  });

  it("lets other tasks run while waiting", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const waiting = B.spawn(function* () {
        yield* sleepMs(5);
        log.push("promise settled");
      });
      const busy = B.spawn(function* () {
        log.push("other task ran");
      });
      yield* B.awaitAll([waiting, busy]);
    });
    expect(log).toEqual(["other task ran", "promise settled"]);
  });

  it("abortSignal refuses something that is not a task, naming it", () => {
    expect(() => B.abortSignal("x" as never)).toThrow(/abortSignal\(task\) expects a task made by B.spawn or B.call, got "x"/);
  });
});
