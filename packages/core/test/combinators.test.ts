/** all, any, race: operations as child tasks, fail-fast, cleanup awaited. */
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { cleanups, errorOf, parked, settle, settleOperation, yieldTimes } from "./support/helpers.js";

/** An operation that yields `n` times, then returns `value`. */
function* after<T>(n: number, value: T): Generator<B.Instruction, T, unknown> {
  yield* yieldTimes(n);
  return value;
}

/** An operation that yields `n` times, then throws `error`. */
function* failAfter(n: number, error: unknown): Generator<B.Instruction, never, unknown> {
  yield* yieldTimes(n);
  throw error;
}

describe("all", () => {
  it("returns the values in the order of the operations", async () => {
    const values = await B.run(function* () {
      return yield* B.all([after(3, 1), after(1, "two"), L.done(true)]);
    });
    expect(values).toEqual([1, "two", true]);
  });

  it("of [] is []", async () => {
    expect(await settleOperation(B.all([]))).toEqual({ ok: true, value: [] });
  });

  it("runs each operation in a child task named after its place", async () => {
    const names: string[] = [];
    await B.run(function* () {
      const parent = B.self();
      yield* B.all([
        (function* () {
          names.push(B.self().name);
          expect(B.self().parent).toBe(parent);
        })(),
        (function* () {
          names.push(B.self().name);
        })(),
      ]);
    });
    expect(names).toEqual(["all[0]", "all[1]"]);
  });

  it("fails fast: the first failure cancels the others, awaits their cleanup, and is thrown", async () => {
    const log: string[] = [];
    const boom = new Error("boom");
    const r = await settle(function* () {
      try {
        yield* B.all([parked(log, "a"), failAfter(2, boom), parked(log, "c")]);
      } finally {
        log.push("all returned");
      }
    });
    expect(errorOf(r)).toBe(boom);
    expect(cleanups(log)).toEqual(["a cleaned", "c cleaned", "all returned"]);
  });

  it("throws the first failure, not a later one", async () => {
    const first = new Error("first");
    const r = await settle(function* () {
      yield* B.all([failAfter(5, new Error("second")), failAfter(1, first)]);
    });
    expect(errorOf(r)).toBe(first);
  });

  it("leaves no child behind on any path (the caller may return at once)", async () => {
    const r = await settle(function* () {
      try {
        yield* B.all([failAfter(0, new Error("x")), after(100, 1)]);
      } catch {
        return "caught";
      }
    });
    expect(r).toEqual({ ok: true, value: "caught" });
  });

  it("rejects a task (await it instead) and what is not an operation", async () => {
    const r = await settle(function* () {
      const t = B.spawn(function* () {
        return 1;
      });
      try {
        yield* B.all([t] as never);
      } finally {
        yield* B.awaitExn(t);
      }
    });
    expect(errorOf(r)).toBeInstanceOf(TypeError);
    expect((errorOf(r) as Error).message).toMatch(/awaitAll/);
    expect(errorOf(await settleOperation(B.all([42] as never)))).toBeInstanceOf(TypeError);
    expect(errorOf(await settleOperation(B.all("ab" as never)))).toBeInstanceOf(TypeError);
  });

  it("cancelled while waiting: cancels every child, waits for their cleanup, then Cancelled reaches the caller", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const caller = B.spawn(function* () {
        try {
          yield* B.all([parked(log, "a"), parked(log, "b")]);
        } finally {
          log.push("caller unwinds");
        }
      });
      yield* yieldTimes(3);
      yield* B.cancel(caller);
      expect(cleanups(log)).toEqual(["a cleaned", "b cleaned", "caller unwinds"]);
      expect(caller.status).toBe("cancelled");
    });
  });

  it("an interrupt while waiting is thrown after the children ended", async () => {
    const log: string[] = [];
    const stop = new Error("interrupted");
    const r = await settle(function* () {
      const me = B.self();
      const interrupter = B.spawn(function* () {
        yield* yieldTimes(3);
        L.interrupt(me, stop);
      });
      try {
        yield* B.all([parked(log, "a")]);
      } finally {
        yield* B.awaitExn(interrupter);
      }
    });
    expect(errorOf(r)).toBe(stop);
    expect(cleanups(log)).toEqual(["a cleaned"]);
  });
});

describe("any", () => {
  it("returns the first success and cancels the others", async () => {
    const log: string[] = [];
    const value = await B.run(function* () {
      return yield* B.any([failAfter(0, new Error("no")), after(2, "yes"), parked(log, "slow")]);
    });
    expect(value).toBe("yes");
    expect(cleanups(log)).toEqual(["slow cleaned"]);
  });

  it("throws an AggregateError of every error, in order, when all fail", async () => {
    const a = new Error("a");
    const b = new Error("b");
    const error = errorOf(await settleOperation(B.any([failAfter(3, a), failAfter(1, b)])));
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as AggregateError).errors).toEqual([a, b]);
  });

  it("of [] throws an AggregateError with no errors (as Promise.any)", async () => {
    const error = errorOf(await settleOperation(B.any([])));
    expect((error as AggregateError).errors).toEqual([]);
  });
});

describe("race", () => {
  it("returns the value of the first to end and cancels the others", async () => {
    const log: string[] = [];
    const value = await B.run(function* () {
      return yield* B.race([parked(log, "slow"), after(1, 7)]);
    });
    expect(value).toBe(7);
    expect(cleanups(log)).toEqual(["slow cleaned"]);
  });

  it("throws the error of the first to end when it failed", async () => {
    const boom = new Error("boom");
    const r = await settleOperation(B.race([after(5, 1), failAfter(1, boom)]));
    expect(errorOf(r)).toBe(boom);
  });

  it("of [] is a RangeError", async () => {
    expect(errorOf(await settleOperation(B.race([])))).toBeInstanceOf(RangeError);
  });
});
