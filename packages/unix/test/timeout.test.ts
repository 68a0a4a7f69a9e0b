import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { Mutex } from "@bobbin/sync";
import { failure, handleCount, thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { run, sleep, Timeout, withTimeout } from "../src/index.js";
import { expectRange } from "./helpers.js";

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

  it("a Timeout's stack begins where withTimeout was called (the error is made when the deadline passes)", async () => {
    function* waitsForTheSlowReply() {
      yield* withTimeout(0.01, sleep(10));
    }
    const error = await run(() => failure<B.Instruction, Timeout>(waitsForTheSlowReply));
    expect(error).toBeInstanceOf(Timeout);
    const [header, ...frames] = error.stack!.split("\n");
    expect(header).toBe("Timeout: the operation did not finish within 0.01 s (withTimeout)");
    // The first frame in a file is the caller's line (a generator's `.throw (<anonymous>)` may come before it).
    expect(frames.find((frame) => !frame.endsWith("(<anonymous>)"))).toMatch(
      /^ {4}at waitsForTheSlowReply \(.*timeout\.test\.ts:\d+:\d+\)$/,
    );
  });

  it("a Timeout the operation froze leaves the scope as it is (no TypeError from taking its stack)", async () => {
    let caught: unknown = null;
    const error = await run(() =>
      failure<B.Instruction, unknown>(() =>
        withTimeout(0.01, function* () {
          try {
            yield* sleep(10);
          } catch (e) {
            caught = Object.freeze(e);
            throw e;
          }
        }),
      ),
    );
    expect(error).toBeInstanceOf(Timeout);
    expect(error).toBe(caught);
  });

  it("after expiry, every later I/O inside the scope fails at once; outside it, I/O works again", async () => {
    await run(function* () {
      const log: string[] = [];
      let waited = Number.NaN;
      const error = yield* failure(() =>
        withTimeout(0.02, function* () {
          try {
            yield* sleep(1);
          } catch (e) {
            log.push((e as Error).name);
          }
          const t0 = performance.now();
          try {
            yield* sleep(10);
          } catch (e) {
            waited = performance.now() - t0;
            log.push((e as Error).name);
            throw e;
          }
        }),
      );
      expect(error).toBeInstanceOf(Timeout);
      expect(log).toEqual(["Timeout", "Timeout"]);
      // "At once": far before the second sleep's 10 s, a margin no loaded machine eats up (a bound of 0 ms was
      // crossed at 1 ms when CI ran three Node lines' suites side by side on two cores; one of 250 ms against a 1 s
      // sleep left that machine's delays little room).
      expect(waited).toBeLessThan(2500);
      yield* sleep(0.001);
    });
  });

  it("nested: the earlier deadline fires; a later inner one is not armed", async () => {
    await run(function* () {
      const timers = handleCount("Timeout");
      const outer = (yield* failure(() =>
        withTimeout(0.03, function* () {
          yield* withTimeout(5, function* () {
            expect(handleCount("Timeout")).toBeLessThanOrEqual(timers + 1); // one Node timer for the backend
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

  it("interrupts any wait, not only I/O: a Trigger, a child, a Promise; the task is not cancelled", async () => {
    await run(function* () {
      const log: string[] = [];
      const t0 = performance.now();
      const trigger = new L.Trigger();
      const onTrigger = yield* failure(() => withTimeout(0.02, trigger.wait()));
      expect(onTrigger).toBeInstanceOf(Timeout);
      expectRange(performance.now() - t0, 19, 2000);

      // a child keeps running: the timed-out parent awaits it afterwards
      const child = B.spawn(function* () {
        yield* sleep(0.05);
        log.push("child done");
        return "child";
      });
      expect(yield* failure(() => withTimeout(0.01, B.awaitExn(child)))).toBeInstanceOf(Timeout);
      expect(child.status).toBe("pending");
      expect(yield* B.awaitExn(child)).toBe("child");

      // a Promise wait is abandoned: its AbortSignal aborts
      let aborted = false;
      const onPromise = yield* failure(() =>
        withTimeout(
          0.01,
          B.promise((signal) => {
            signal.addEventListener("abort", () => (aborted = true));
            return new Promise<void>(() => {});
          }),
        ),
      );
      expect(onPromise).toBeInstanceOf(Timeout);
      expect(aborted).toBe(true);
      log.push("went on");
      yield* sleep(0.001); // outside the scope, I/O works again
      expect(log).toEqual(["child done", "went on"]);
    });
  });

  it("a task busy when its deadline passes is interrupted at its next wait", async () => {
    await run(function* () {
      const error = yield* failure(() =>
        withTimeout(0.01, function* () {
          const until = performance.now() + 40;
          while (performance.now() < until) yield* B.yieldNow(); // the deadline passes meanwhile, with the task ready to run
          const t0 = performance.now();
          try {
            yield* new L.Trigger().wait(); // not I/O, not signalled: the deadline's interruption ends it
          } finally {
            expectRange(performance.now() - t0, 0, 1000);
          }
        }),
      );
      expect(error).toBeInstanceOf(Timeout);
    });
  });

  it("a timeout caught inside an enclosing scope does not disturb it; the enclosing deadline interrupts a Mutex-like wait", async () => {
    await run(function* () {
      const trigger = new L.Trigger();
      const outer = (yield* failure(() =>
        withTimeout(0.05, function* () {
          try {
            yield* withTimeout(0.01, trigger.wait());
          } catch (e) {
            expect((e as Timeout).seconds).toBe(0.01);
          }
          yield* new L.Trigger().wait(); // interrupted by the outer deadline
        }),
      )) as Timeout;
      expect(outer.seconds).toBe(0.05);
    });
  });

  it("a lock in a cycle of waits under a deadline is no Deadlock: the deadline ends the wait", async () => {
    const unrelated = setInterval(() => {}, 1000); // cycles are looked for while other handles keep Node alive
    try {
      const r = await run(function* () {
        const first = new Mutex();
        const second = new Mutex();
        const a = B.spawn({ name: "a" }, function* () {
          yield* first.lock();
          yield* sleep(0.01);
          yield* second.lock();
        });
        yield* second.lock();
        yield* sleep(0.01);
        const late = yield* failure(() => withTimeout(0.3, first.lock()));
        second.unlock();
        yield* B.awaitTask(a);
        return late;
      });
      expect(r).toBeInstanceOf(Timeout);
    } finally {
      clearInterval(unrelated);
    }
  });

  it("timeouts of different tasks are independent; cancelling a task in a scope leaves no timer", async () => {
    await run(function* () {
      const before = handleCount("Timeout");
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
      expect(handleCount("Timeout")).toBeLessThanOrEqual(before);
    });
  });

  it("names its source in the Timeout it throws; a caller tells its own from an enclosing scope's by it", async () => {
    await run(function* () {
      const plain = (yield* failure(() => withTimeout(0.01, sleep(5)))) as Timeout;
      expect([plain.source, plain.message]).toEqual(["withTimeout", "the operation did not finish within 0.01 s (withTimeout)"]);
      const named = (yield* failure(() => withTimeout(0.01, sleep(5), "the handshake's timeout"))) as Timeout;
      expect([named.source, named.seconds, named.message]).toEqual([
        "the handshake's timeout",
        0.01,
        "the operation did not finish within 0.01 s (the handshake's timeout)",
      ]);
      // the enclosing scope fires first: its Timeout carries its own source, not the inner one's
      const outer = (yield* failure(() => withTimeout(0.01, withTimeout(0.5, sleep(5), "inner")))) as Timeout;
      expect(outer.source).toBe("withTimeout");
    });
  });

  it("checks its arguments", async () => {
    await run(function* () {
      expect(thrownBy(() => withTimeout(1, sleep(1), ""))).toBeInstanceOf(TypeError);
      expect(thrownBy(() => withTimeout(1, sleep(1), 7 as unknown as string)).message).toMatch(
        /source must be a non-empty string, got number 7/,
      );
      expect(thrownBy(() => withTimeout(-1, sleep(1)))).toBeInstanceOf(RangeError);
      expect(thrownBy(() => withTimeout(Number.NaN, sleep(1)))).toBeInstanceOf(RangeError);
      expect(thrownBy(() => withTimeout(1, 42 as unknown as B.Operation<void>))).toBeInstanceOf(TypeError);
      expect(yield* failure(() => withTimeout(1, (() => 42) as unknown as () => B.Operation<void>))).toBeInstanceOf(TypeError);
    });
  });
});
