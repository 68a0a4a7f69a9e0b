import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { run, sleep, Timeout, withTimeout } from "../src/index.js";
import { count, expectRange, failure, thrown } from "./helpers.js";

describe("withTimeout", () => {
  it("returns the operation's value when it finishes in time (operation or generator function)", async () => {
    const [a, b] = await run(function* () {
      const a = yield* withTimeout(1, function* () {
        yield* sleep(0.01);
        return "a";
      });
      const b = yield* withTimeout(Infinity, sleep(0.001));
      return [a, b];
    });
    expect(a).toBe("a");
    expect(b).toBeUndefined();
  });

  it("throws Timeout (code ETIMEDOUT, with its delay) at the I/O the task waits in", async () => {
    await run(function* () {
      const t0 = performance.now();
      const error = (yield* failure(() => withTimeout(0.03, sleep(10)))) as Timeout;
      expect(error).toBeInstanceOf(Timeout);
      expect(error.name).toBe("Timeout");
      expect(error.code).toBe("ETIMEDOUT");
      expect(error.seconds).toBe(0.03);
      expectRange(performance.now() - t0, 29, 2000);
      // withTimeout(0): the first I/O times out
      expect(yield* failure(() => withTimeout(0, sleep(1)))).toBeInstanceOf(Timeout);
    });
  });

  it("after expiry, every later I/O inside the scope fails at once; outside it, I/O works again", async () => {
    await run(function* () {
      const log: string[] = [];
      const error = yield* failure(() =>
        withTimeout(0.02, function* () {
          try {
            yield* sleep(1);
          } catch (e) {
            log.push((e as Error).name);
          }
          const t0 = performance.now();
          try {
            yield* sleep(1);
          } catch (e) {
            log.push(`${(e as Error).name} after ${Math.round(performance.now() - t0)} ms`);
            throw e;
          }
        }),
      );
      expect(error).toBeInstanceOf(Timeout);
      expect(log).toEqual(["Timeout", "Timeout after 0 ms"]);
      yield* sleep(0.001);
    });
  });

  it("nested: the earlier deadline fires; a later inner one is not armed", async () => {
    await run(function* () {
      const timers = count("Timeout");
      const outer = (yield* failure(() =>
        withTimeout(0.03, function* () {
          yield* withTimeout(5, function* () {
            expect(count("Timeout")).toBeLessThanOrEqual(timers + 1); // one Node timer for the backend
            yield* sleep(5);
          });
        }),
      )) as Timeout;
      expect(outer.seconds).toBe(0.03);
      const inner = (yield* failure(() => withTimeout(5, withTimeout(0.02, sleep(5))))) as Timeout;
      expect(inner.seconds).toBe(0.02);
      // an inner timeout caught inside the outer scope lets the outer operation go on
      const value = yield* withTimeout(5, function* () {
        try {
          yield* withTimeout(0.01, sleep(5));
        } catch (e) {
          if (!(e instanceof Timeout)) throw e;
        }
        yield* sleep(0.001);
        return "recovered";
      });
      expect(value).toBe("recovered");
    });
  });

  it("a wait that is not I/O is not interrupted, but the next I/O in the scope is", async () => {
    await run(function* () {
      const trigger = new B.Trigger();
      const waker = B.spawn(function* () {
        yield* sleep(0.06);
        trigger.signal();
      });
      const t0 = performance.now();
      const error = yield* failure(() =>
        withTimeout(0.02, function* () {
          yield* trigger.wait(); // not interruptible: ends at 60 ms
          yield* sleep(0.001); // throws the timeout at once
        }),
      );
      expect(error).toBeInstanceOf(Timeout);
      expectRange(performance.now() - t0, 59, 2000);
      yield* B.awaitExn(waker);
    });
  });

  it("timeouts of different tasks are independent; cancelling a task in a scope leaves no timer", async () => {
    await run(function* () {
      const before = count("Timeout");
      const a = B.spawn(function* () {
        return yield* failure(() => withTimeout(0.02, sleep(5)));
      });
      const b = B.spawn(function* () {
        yield* withTimeout(5, sleep(0.05));
        return "b in time";
      });
      const c = B.spawn(function* () {
        yield* withTimeout(100, sleep(100));
      });
      expect(yield* B.awaitExn(a)).toBeInstanceOf(Timeout);
      expect(yield* B.awaitExn(b)).toBe("b in time");
      yield* B.cancel(c);
      expect(count("Timeout")).toBeLessThanOrEqual(before);
    });
  });

  it("checks its arguments", async () => {
    await run(function* () {
      expect(thrown(() => withTimeout(-1, sleep(1)))).toBeInstanceOf(RangeError);
      expect(thrown(() => withTimeout(Number.NaN, sleep(1)))).toBeInstanceOf(RangeError);
      expect(thrown(() => withTimeout(1, 42 as unknown as B.Operation<void>))).toBeInstanceOf(TypeError);
      expect(yield* failure(() => withTimeout(1, (() => 42) as unknown as () => B.Operation<void>))).toBeInstanceOf(TypeError);
    });
  });
});
