import * as B from "@bobbin/core";
import { errorOf } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Semaphore } from "../src/index.js";
import { forever, pause } from "./helpers.js";

describe("Semaphore: acquire and release", () => {
  it("takes available permits without suspending and gives them back", async () => {
    const s = new Semaphore(2);
    await B.run(function* () {
      let otherRan = false;
      const other = B.spawn(function* () {
        otherRan = true;
      });
      yield* s.acquire();
      yield* s.acquire(1);
      expect(otherRan).toBe(false);
      expect(s.available).toBe(0);
      s.release(2);
      expect(s.available).toBe(2);
      yield* s.acquire(0);
      expect(s.available).toBe(2);
      yield* B.awaitExn(other);
    });
  });

  it("never lets more than n tasks in", async () => {
    const s = Semaphore.create(3);
    let inside = 0;
    let maxInside = 0;
    await B.run(function* () {
      const ts = Array.from({ length: 12 }, () =>
        B.spawn(function* () {
          for (let k = 0; k < 5; k++) {
            yield* s.withPermits(1, function* () {
              inside++;
              maxInside = Math.max(maxInside, inside);
              yield* pause(2);
              inside--;
            });
          }
        }),
      );
      yield* B.awaitAll(ts);
    });
    expect(maxInside).toBe(3);
    expect(s.available).toBe(3);
    expect(s.waiters).toBe(0);
  });

  it("serves waiters in FIFO order: a large request at the head is not overtaken", async () => {
    const s = new Semaphore(0);
    const order: string[] = [];
    await B.run(function* () {
      const mk = (name: string, n: number) =>
        B.spawn(function* () {
          yield* s.acquire(n);
          order.push(name);
        });
      const big = mk("big(3)", 3);
      const small = mk("small(1)", 1);
      yield* pause(2);
      expect(s.waiters).toBe(2);
      s.release(1);
      yield* pause(2);
      expect(order).toEqual([]); // small does not jump ahead of big
      expect(s.tryAcquire()).toBe(false); // nor does tryAcquire
      s.release(3); // big gets 3, small gets 1
      yield* B.awaitAll([big, small]);
      expect(order).toEqual(["big(3)", "small(1)"]);
      expect(s.available).toBe(0);
    });
  });

  it("one release wakes every waiter it satisfies", async () => {
    const s = new Semaphore(0);
    await B.run(function* () {
      const ts = [1, 1, 2, 5].map((n) =>
        B.spawn(function* () {
          yield* s.acquire(n);
          return n;
        }),
      );
      yield* pause(2);
      s.release(4); // 1 + 1 + 2; 5 still waits
      yield* pause(2);
      expect(ts.map((t) => t.status)).toEqual(["resolved", "resolved", "resolved", "pending"]);
      expect(s.available).toBe(0);
      s.release(5);
      yield* B.awaitAll(ts);
    });
  });

  it("tryAcquire takes permits only when available and nobody waits", async () => {
    const s = new Semaphore(2);
    await B.run(function* () {
      expect(s.tryAcquire(2)).toBe(true);
      expect(s.tryAcquire()).toBe(false);
      s.release();
      expect(s.tryAcquire()).toBe(true);
      expect(s.tryAcquire(0)).toBe(true);
      s.release(1);
    });
    expect(s.available).toBe(1);
  });

  it("can be released from a plain callback, and above its initial count", async () => {
    const s = new Semaphore(0);
    await B.run(function* () {
      const w = B.spawn(function* () {
        yield* s.acquire(2);
        return "ok";
      });
      setTimeout(() => s.release(3), 5);
      expect(yield* B.awaitExn(w)).toBe("ok");
    });
    expect(s.available).toBe(1);
  });

  it("rejects bad counts with RangeError", async () => {
    expect(() => new Semaphore(-1)).toThrow(RangeError);
    expect(() => new Semaphore(1.5)).toThrow(RangeError);
    const s = new Semaphore(1);
    expect(() => s.acquire(-1)).toThrow(RangeError);
    expect(() => s.release(Number.NaN)).toThrow(RangeError);
    expect(() => s.tryAcquire(0.5)).toThrow(RangeError);
    expect(() => s.withPermits(-2, () => 0)).toThrow(RangeError);
    expect(() => s.withPermits(1, 42 as never)).toThrow(TypeError);
    expect(() => s.acquire()[Symbol.iterator]()).toThrow(TypeError); // outside a task
  });
});

describe("Semaphore: withPermits", () => {
  it("returns the body's value and gives the permits back on return and throw", async () => {
    const s = new Semaphore(2);
    await B.run(function* () {
      expect(yield* s.withPermits(2, (a: number) => a + 1, 41)).toBe(42);
      expect(s.available).toBe(2);
      let caught: unknown;
      try {
        yield* s.withPermits(1, function* () {
          yield* pause(1);
          throw new Error("boom");
        });
      } catch (e) {
        caught = e;
      }
      expect((caught as Error).message).toBe("boom");
      expect(s.available).toBe(2);
    });
  });

  it("gives the permits back when the task is cancelled inside", async () => {
    const s = new Semaphore(1);
    await B.run(function* () {
      const t = B.spawn(function* () {
        yield* s.withPermits(1, forever);
      });
      yield* pause(2);
      expect(s.available).toBe(0);
      yield* B.cancel(t);
      expect(s.available).toBe(1);
    });
  });
});

describe("Semaphore: cancellation", () => {
  it("a cancelled waiter leaves the queue with no permit", async () => {
    const s = new Semaphore(0);
    await B.run(function* () {
      const a = B.spawn(function* () {
        yield* s.acquire();
        return "a";
      });
      const b = B.spawn(function* () {
        yield* s.acquire();
        return "b";
      });
      yield* pause(2);
      expect(s.waiters).toBe(2);
      yield* B.cancel(a);
      expect(s.waiters).toBe(1);
      expect(errorOf(yield* B.awaitTask(a))).toBeInstanceOf(B.Cancelled);
      s.release();
      expect(yield* B.awaitExn(b)).toBe("b");
      expect(s.available).toBe(0);
      expect(s.waiters).toBe(0);
    });
  });

  it("cancelling a large request at the head unblocks the smaller ones behind it", async () => {
    const s = new Semaphore(2);
    await B.run(function* () {
      const big = B.spawn(function* () {
        yield* s.acquire(5);
      });
      const small = B.spawn(function* () {
        yield* s.acquire(2);
        return "small";
      });
      yield* pause(2);
      expect(s.waiters).toBe(2);
      yield* B.cancel(big);
      expect(yield* B.awaitExn(small)).toBe("small");
      expect(s.available).toBe(0);
      expect(s.waiters).toBe(0);
    });
  });

  it("permits released to a waiter cancelled and detached in the same step go to the next waiter", async () => {
    const s = new Semaphore(0);
    await B.run(function* () {
      const w1 = B.spawn(function* () {
        yield* s.acquire();
      });
      const w2 = B.spawn(function* () {
        yield* s.acquire();
        return "w2";
      });
      const x = B.spawn(function* () {
        yield* B.protect({ onCancellation: () => s.release() }, forever);
      });
      const winner = B.spawn(function* () {
        return "winner";
      });
      yield* pause(3);
      expect(s.waiters).toBe(2);
      yield* B.awaitFirst<unknown>([winner, w1, x]);
      expect(yield* B.awaitExn(w2)).toBe("w2");
      expect(w1.status).toBe("cancelled");
      expect(s.available).toBe(0); // the permit was not lost with w1, nor duplicated
      expect(s.waiters).toBe(0);
    });
  });
});
