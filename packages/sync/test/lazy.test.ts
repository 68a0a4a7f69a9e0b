import * as B from "@bobbin/core";
import { errorOf } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Lazy, LazyUndefined } from "../src/index.js";
import { forever, pause } from "./helpers.js";

describe("Lazy", () => {
  it("fromVal is forced already and force returns at once", async () => {
    const l = Lazy.fromVal(42);
    expect(l.isForced).toBe(true);
    await B.run(function* () {
      let otherRan = false;
      const other = B.spawn(function* () {
        otherRan = true;
      });
      expect(yield* l.force()).toBe(42);
      expect(otherRan).toBe(false);
      yield* B.awaitExn(other);
    });
  });

  it("the first forcer computes in its own task; the others wait for its value", async () => {
    let calls = 0;
    let computedBy: B.Task | undefined;
    const l = Lazy.fromFun(function* () {
      calls++;
      computedBy = B.self();
      yield* pause(5);
      return { answer: 42 };
    });
    expect(l.isForced).toBe(false);
    await B.run(function* () {
      const forcers = Array.from({ length: 5 }, () =>
        B.spawn(function* () {
          return yield* l.force();
        }),
      );
      yield* pause(2);
      expect(l.waiters).toBe(4);
      const results = (yield* B.awaitAll(forcers)).map((r) => (r.ok ? r.value : r.error));
      expect(computedBy).toBe(forcers[0]);
      expect(new Set(results).size).toBe(1); // the very same object
      expect(results[0]).toEqual({ answer: 42 });
      expect(yield* l.force()).toBe(results[0]);
    });
    expect(calls).toBe(1);
    expect(l.isForced).toBe(true);
    expect(l.waiters).toBe(0);
  });

  it("accepts a plain function", async () => {
    let calls = 0;
    const l = Lazy.fromFun(() => ++calls);
    await B.run(function* () {
      expect(yield* l.force()).toBe(1);
      expect(yield* l.force()).toBe(1);
    });
    expect(calls).toBe(1);
  });

  it("memoises the error: every force throws the same error and the function runs once", async () => {
    let calls = 0;
    const boom = new Error("boom");
    const l = Lazy.fromFun(function* () {
      calls++;
      yield* pause(2);
      throw boom;
    });
    await B.run(function* () {
      const forcers = Array.from({ length: 3 }, () =>
        B.spawn(function* () {
          return yield* l.force();
        }),
      );
      const results = yield* B.awaitAll(forcers);
      for (const r of results) expect(errorOf(r)).toBe(boom);
      let again: unknown;
      try {
        yield* l.force();
      } catch (e) {
        again = e;
      }
      expect(again).toBe(boom);
    });
    expect(calls).toBe(1);
    expect(l.isForced).toBe(true);
  });

  it("a lazy value that forces itself raises LazyUndefined", async () => {
    // eslint-disable-next-line prefer-const
    let l: Lazy<number>;
    l = Lazy.fromFun(function* (): Generator<B.Instruction, number, unknown> {
      return 1 + (yield* l.force());
    });
    await B.run(function* () {
      let error: unknown;
      try {
        yield* l.force();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(LazyUndefined);
      expect((error as Error).name).toBe("LazyUndefined");
      expect((error as Error).message).toMatch(/cannot depend on itself/);
    });
  });

  it("a cancelled waiter leaves; the computation goes on for the others", async () => {
    const l = Lazy.fromFun(function* () {
      yield* pause(10);
      return "v";
    });
    await B.run(function* () {
      const runner = B.spawn(function* () {
        return yield* l.force();
      });
      const w1 = B.spawn(function* () {
        return yield* l.force();
      });
      const w2 = B.spawn(function* () {
        return yield* l.force();
      });
      yield* pause(2);
      expect(l.waiters).toBe(2);
      yield* B.cancel(w1);
      expect(l.waiters).toBe(1);
      expect(yield* B.awaitExn(runner)).toBe("v");
      expect(yield* B.awaitExn(w2)).toBe("v");
    });
  });

  it("when the computing forcer is cancelled, nothing is memoised and the next waiter computes", async () => {
    let calls = 0;
    const l = Lazy.fromFun(function* () {
      calls++;
      yield* pause(5);
      return calls;
    });
    await B.run(function* () {
      const first = B.spawn(function* () {
        return yield* l.force();
      });
      const second = B.spawn(function* () {
        return yield* l.force();
      });
      const third = B.spawn(function* () {
        return yield* l.force();
      });
      yield* pause(2);
      yield* B.cancel(first);
      expect(errorOf(yield* B.awaitTask(first))).toBeInstanceOf(B.Cancelled);
      expect(l.isForced).toBe(false);
      expect(yield* B.awaitExn(second)).toBe(2); // second took over the computation
      expect(yield* B.awaitExn(third)).toBe(2);
      expect(yield* l.force()).toBe(2);
    });
    expect(calls).toBe(2);
  });

  it("a Cancelled thrown by the computation itself (the forcer is not cancelled) is memoised", async () => {
    const l = Lazy.fromFun(function* () {
      const child = B.spawn(forever);
      yield* B.cancel(child);
      return yield* B.awaitExn(child); // throws Cancelled: the child's outcome
    });
    await B.run(function* () {
      let error: unknown;
      try {
        yield* l.force();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(B.Cancelled);
      expect(l.isForced).toBe(true);
    });
  });

  it("fromFun rejects a non-function; force of an unforced lazy outside a task is a TypeError", () => {
    expect(() => Lazy.fromFun(3 as never)).toThrow(TypeError);
    const l = Lazy.fromFun(() => 1);
    expect(() => l.force()[Symbol.iterator]().next()).toThrow(TypeError);
  });
});
