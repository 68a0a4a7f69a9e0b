import * as B from "@bobbin/core";
import { errorOf } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Mutex, MutexAlreadyHeld, MutexNotHolder, MutexNotLocked } from "../src/index.js";
import { forever, pause } from "./helpers.js";

describe("Mutex: locking", () => {
  it("locks a free mutex without suspending, and unlocks it", async () => {
    const m = new Mutex();
    await B.run(function* () {
      let otherRan = false;
      const other = B.spawn(function* () {
        otherRan = true;
      });
      yield* m.lock();
      // A suspension would have let the queued child run.
      expect(otherRan).toBe(false);
      expect(m.isLocked).toBe(true);
      expect(m.holder).toBe(B.self());
      m.unlock();
      expect(m.isLocked).toBe(false);
      expect(m.holder).toBeNull();
      yield* B.awaitExn(other);
    });
  });

  it("m.lock() without yield* does nothing", async () => {
    const m = new Mutex();
    await B.run(function* () {
      void m.lock();
      expect(m.isLocked).toBe(false);
    });
  });

  it("gives the lock to waiters in FIFO order, handing it over directly (no barging)", async () => {
    const m = new Mutex();
    const order: number[] = [];
    await B.run(function* () {
      yield* m.lock();
      const tasks = [0, 1, 2, 3, 4].map((i) =>
        B.spawn(function* () {
          yield* m.lock();
          order.push(i);
          yield* pause(2); // hold it across suspensions
          m.unlock();
        }),
      );
      yield* pause(3);
      expect(m.waiters).toBe(5);
      m.unlock();
      // Handed to the oldest waiter at once: the unlocker cannot take it back.
      expect(m.holder).toBe(tasks[0]);
      expect(m.tryLock()).toBe(false);
      expect(m.waiters).toBe(4);
      yield* B.awaitAll(tasks);
    });
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(m.isLocked).toBe(false);
    expect(m.waiters).toBe(0);
  });

  it("tryLock takes a free mutex only", async () => {
    const m = new Mutex();
    await B.run(function* () {
      expect(m.tryLock()).toBe(true);
      expect(m.tryLock()).toBe(false); // held by this very task: false, not a deadlock
      const child = B.spawn(function* () {
        return m.tryLock();
      });
      expect(yield* B.awaitExn(child)).toBe(false);
      m.unlock();
      const child2 = B.spawn(function* () {
        const got = m.tryLock();
        if (got) m.unlock();
        return got;
      });
      expect(yield* B.awaitExn(child2)).toBe(true);
    });
  });

  it("keeps mutual exclusion across suspensions", async () => {
    const m = new Mutex();
    let inside = 0;
    let maxInside = 0;
    await B.run(function* () {
      const tasks = Array.from({ length: 20 }, () =>
        B.spawn(function* () {
          for (let k = 0; k < 10; k++) {
            yield* m.lock();
            inside++;
            maxInside = Math.max(maxInside, inside);
            yield* pause(1);
            inside--;
            m.unlock();
            yield* pause(1);
          }
        }),
      );
      yield* B.awaitAll(tasks);
    });
    expect(maxInside).toBe(1);
    expect(m.isLocked).toBe(false);
  });

  it("offers the Miou-style static API", async () => {
    const m = Mutex.create();
    await B.run(function* () {
      yield* Mutex.lock(m);
      expect(Mutex.tryLock(m)).toBe(false);
      Mutex.unlock(m);
      expect(yield* Mutex.protect(m, (a: number, b: number) => a + b, 1, 2)).toBe(3);
      expect(() => Mutex.unlock({} as Mutex)).toThrow(TypeError);
    });
  });
});

describe("Mutex: misuse is a typed error", () => {
  it("unlock of an unlocked mutex is MutexNotLocked", async () => {
    const m = new Mutex();
    await B.run(function* () {
      let error: unknown;
      try {
        m.unlock();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(MutexNotLocked);
      expect((error as Error).name).toBe("MutexNotLocked");
      expect((error as Error).message).toMatch(/not locked/);
      yield* m.lock();
      m.unlock();
      expect(() => m.unlock()).toThrow(MutexNotLocked);
    });
  });

  it("unlock by a task that does not hold it is MutexNotHolder", async () => {
    const m = new Mutex();
    await B.run(function* () {
      yield* m.lock();
      const holder = B.self().uid;
      const thief = B.spawn(function* () {
        m.unlock();
      });
      const error = errorOf(yield* B.awaitTask(thief));
      expect(error).toBeInstanceOf(MutexNotHolder);
      expect((error as Error).name).toBe("MutexNotHolder");
      expect((error as Error).message).toContain(`held by task ${holder}`);
      expect(m.holder).toBe(B.self()); // still ours
      m.unlock();
    });
  });

  it("lock by the holder is MutexAlreadyHeld (not a deadlock)", async () => {
    const m = new Mutex();
    await B.run(function* () {
      yield* m.lock();
      let error: unknown;
      try {
        yield* m.lock();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(MutexAlreadyHeld);
      expect((error as Error).name).toBe("MutexAlreadyHeld");
      expect((error as Error).message).toMatch(/not recursive/);
      expect(m.waiters).toBe(0);
      m.unlock();
    });
  });

  it("lock, unlock and tryLock outside a task are TypeErrors", () => {
    const m = new Mutex();
    expect(() => m.unlock()).toThrow(TypeError);
    expect(() => m.tryLock()).toThrow(TypeError);
    expect(() => m.lock()[Symbol.iterator]()).toThrow(TypeError);
  });
});

describe("Mutex: protect and guards", () => {
  it("protect returns the body's value and unlocks", async () => {
    const m = new Mutex();
    await B.run(function* () {
      const v = yield* m.protect(function* (k: number) {
        expect(m.holder).toBe(B.self());
        yield* pause(1);
        return k * 2;
      }, 21);
      expect(v).toBe(42);
      expect(m.isLocked).toBe(false);
      expect(yield* m.protect(() => "plain")).toBe("plain");
      expect(m.isLocked).toBe(false);
    });
  });

  it("protect unlocks when the body throws, and rethrows", async () => {
    const m = new Mutex();
    await B.run(function* () {
      const boom = new Error("boom");
      let caught: unknown;
      try {
        yield* m.protect(function* () {
          yield* pause(1);
          throw boom;
        });
      } catch (e) {
        caught = e;
      }
      expect(caught).toBe(boom);
      expect(m.isLocked).toBe(false);
      // A body that (wrongly) unlocked and then threw: its error wins.
      try {
        yield* m.protect(() => {
          m.unlock();
          throw boom;
        });
      } catch (e) {
        caught = e;
      }
      expect(caught).toBe(boom);
      expect(m.isLocked).toBe(false);
    });
  });

  it("protect unlocks when the task is cancelled inside, and the next waiter gets the lock", async () => {
    const m = new Mutex();
    await B.run(function* () {
      const inside = B.spawn(function* () {
        yield* m.protect(forever);
      });
      yield* pause(2);
      expect(m.holder).toBe(inside);
      const next = B.spawn(function* () {
        yield* m.lock();
        m.unlock();
        return "got it";
      });
      yield* pause(2);
      expect(m.waiters).toBe(1);
      yield* B.cancel(inside);
      expect((yield* B.awaitTask(inside)).ok).toBe(false);
      // Handed over by protect's unlock (next may already have run and unlocked).
      expect(m.holder === next || m.holder === null).toBe(true);
      expect(yield* B.awaitExn(next)).toBe("got it");
      expect(m.isLocked).toBe(false);
    });
  });

  it("a guard unlocks at the end of a `using` block, on throw and on cancellation", async () => {
    const m = new Mutex();
    await B.run(function* () {
      {
        using _g = yield* m.guard();
        expect(m.holder).toBe(B.self());
      }
      expect(m.isLocked).toBe(false);
      try {
        using _g = yield* m.guard();
        throw new Error("x");
      } catch {
        // expected
      }
      expect(m.isLocked).toBe(false);
      const t = B.spawn(function* () {
        using _g = yield* m.guard();
        yield* forever();
      });
      yield* pause(2);
      expect(m.holder).toBe(t);
      yield* B.cancel(t);
      expect(m.isLocked).toBe(false);
      // Early unlock, then disposal does nothing.
      const g = yield* m.guard();
      g.unlock();
      expect(m.isLocked).toBe(false);
      g[Symbol.dispose]();
      expect(m.isLocked).toBe(false);
    });
  });
});

describe("Mutex: cancellation", () => {
  it("a cancelled waiter leaves the queue at once and never holds the lock", async () => {
    const m = new Mutex();
    const got: string[] = [];
    await B.run(function* () {
      yield* m.lock();
      const mk = (name: string) =>
        B.spawn(function* () {
          yield* m.lock();
          got.push(name);
          m.unlock();
        });
      const a = mk("a");
      const b = mk("b");
      const c = mk("c");
      yield* pause(2);
      expect(m.waiters).toBe(3);
      yield* B.cancel(b);
      expect(m.waiters).toBe(2);
      expect(errorOf(yield* B.awaitTask(b))).toBeInstanceOf(B.Cancelled);
      m.unlock();
      yield* B.awaitAll([a, c]);
    });
    expect(got).toEqual(["a", "c"]);
    expect(m.isLocked).toBe(false);
    expect(m.waiters).toBe(0);
  });

  it("cancelling every waiter leaves nothing queued and the mutex free once unlocked", async () => {
    const m = new Mutex();
    await B.run(function* () {
      yield* m.lock();
      const ts = Array.from({ length: 10 }, () =>
        B.spawn(function* () {
          yield* m.lock();
          m.unlock();
        }),
      );
      yield* pause(2);
      expect(m.waiters).toBe(10);
      for (const t of ts) yield* B.cancel(t);
      expect(m.waiters).toBe(0);
      m.unlock();
      expect(m.isLocked).toBe(false);
    });
  });

  it("a waiter that was handed the lock and then cancelled holds it until its cleanup unlocks", async () => {
    const m = new Mutex();
    let locked = false;
    await B.run(function* () {
      yield* m.lock();
      const w = B.spawn(function* () {
        yield* m.lock();
        locked = true; // the lock was handed over before the cancellation: lock returns normally
        try {
          yield* pause(5); // Cancelled arrives here, at the next suspension point
        } finally {
          m.unlock();
        }
      });
      yield* pause(2);
      m.unlock(); // hands the lock to w (w is queued to resume)
      expect(m.holder).toBe(w);
      yield* B.cancel(w); // w has a pending resumption: it is not overridden
      expect(locked).toBe(true);
      expect(errorOf(yield* B.awaitTask(w))).toBeInstanceOf(B.Cancelled);
      expect(m.isLocked).toBe(false);
    });
  });

  it("a lock handed to a waiter cancelled and detached in the same step passes to the next waiter", async () => {
    const m = new Mutex();
    await B.run(function* () {
      yield* m.lock();
      const w1 = B.spawn(function* () {
        yield* m.lock();
        m.unlock();
        return "w1";
      });
      const w3 = B.spawn(function* () {
        yield* m.lock();
        const holderWasMe = m.holder === B.self();
        m.unlock();
        return holderWasMe;
      });
      // x unlocks the parent's mutex from its onCancellation handler, which runs
      // synchronously inside the parent's step, right after w1 was detached.
      const x = B.spawn(function* () {
        yield* B.protect({ onCancellation: () => m.unlock() }, forever);
      });
      const winner = B.spawn(function* () {
        return "winner";
      });
      yield* pause(3);
      expect(m.waiters).toBe(2);
      const first = yield* B.awaitFirst<unknown>([winner, w1, x]);
      expect(first).toEqual({ ok: true, value: "winner" });
      // w1 was cancelled before x's handler unlocked: the lock skipped it.
      expect(m.holder === w3 || m.holder === null).toBe(true);
      expect(yield* B.awaitExn(w3)).toBe(true);
      expect(w1.status).toBe("cancelled");
      expect(m.isLocked).toBe(false);
      expect(m.waiters).toBe(0);
    });
  });
});
