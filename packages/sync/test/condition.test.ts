import * as B from "@bobbin/core";
import { errorOf } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Condition, Mutex, MutexNotHolder } from "../src/index.js";
import { forever, pause } from "./helpers.js";

describe("Condition: wait, signal, broadcast", () => {
  it("wait releases the mutex while parked and holds it again when it returns", async () => {
    const m = new Mutex();
    const c = new Condition();
    let ready = false;
    await B.run(function* () {
      const waiter = B.spawn(function* () {
        yield* m.lock();
        while (!ready) yield* c.wait(m);
        const holding = m.holder === B.self();
        m.unlock();
        return holding;
      });
      yield* pause(2);
      expect(c.waiters).toBe(1);
      expect(m.isLocked).toBe(false); // released by wait
      yield* m.lock();
      ready = true;
      expect(c.signal()).toBe(true);
      yield* pause(3);
      // Woken, but the signaller still holds the mutex: the waiter waits for it.
      expect(waiter.status).toBe("pending");
      expect(m.waiters).toBe(1);
      m.unlock();
      expect(yield* B.awaitExn(waiter)).toBe(true);
    });
    expect(c.waiters).toBe(0);
    expect(m.isLocked).toBe(false);
  });

  it("signal wakes the oldest waiter only; a signal with no waiter is not remembered", async () => {
    const m = new Mutex();
    const c = new Condition();
    const woken: number[] = [];
    await B.run(function* () {
      expect(c.signal()).toBe(false);
      const ts = [0, 1, 2].map((i) =>
        B.spawn(function* () {
          yield* m.protect(function* () {
            yield* c.wait(m);
            woken.push(i);
          });
        }),
      );
      yield* pause(3);
      expect(c.waiters).toBe(3);
      c.signal();
      yield* pause(3);
      expect(woken).toEqual([0]);
      c.signal();
      yield* pause(3);
      expect(woken).toEqual([0, 1]);
      c.signal();
      yield* B.awaitAll(ts);
      expect(woken).toEqual([0, 1, 2]);
    });
  });

  it("broadcast wakes every waiter, each re-acquiring the mutex in turn", async () => {
    const m = new Mutex();
    const c = new Condition();
    let inside = 0;
    let maxInside = 0;
    await B.run(function* () {
      const ts = Array.from({ length: 5 }, () =>
        B.spawn(function* () {
          yield* m.protect(function* () {
            yield* c.wait(m);
            inside++;
            maxInside = Math.max(maxInside, inside);
            yield* pause(1);
            inside--;
          });
        }),
      );
      yield* pause(3);
      expect(yield* m.protect(() => c.broadcast())).toBe(5);
      expect(c.waiters).toBe(0);
      yield* B.awaitAll(ts);
    });
    expect(maxInside).toBe(1);
  });

  it("wait without holding the mutex is MutexNotHolder", async () => {
    const m = new Mutex();
    const c = new Condition();
    await B.run(function* () {
      let error: unknown;
      try {
        yield* c.wait(m);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(MutexNotHolder);
      expect((error as Error).message).toMatch(/wait on a condition/);
      const holder = B.spawn(function* () {
        yield* m.lock();
        yield* pause(3);
        m.unlock();
      });
      yield* pause(1);
      try {
        yield* c.wait(m);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(MutexNotHolder);
      expect(c.waiters).toBe(0);
      yield* B.awaitExn(holder);
      expect(() => c.wait({} as Mutex)).toThrow(TypeError);
    });
  });

  it("can be signalled from a plain callback", async () => {
    const m = new Mutex();
    const c = new Condition();
    let ready = false;
    await B.run(function* () {
      setTimeout(() => {
        ready = true;
        c.signal();
      }, 5);
      yield* m.protect(function* () {
        while (!ready) yield* c.wait(m);
      });
    });
    expect(ready).toBe(true);
    expect(() => c.wait(m)[Symbol.iterator]().next()).toThrow(TypeError); // outside a task
  });

  it("offers the Miou-style static API", async () => {
    const m = Mutex.create();
    const c = Condition.create();
    await B.run(function* () {
      const t = B.spawn(function* () {
        yield* Mutex.protect(m, function* () {
          yield* Condition.wait(c, m);
        });
      });
      yield* pause(2);
      expect(Condition.signal(c)).toBe(true);
      expect(Condition.broadcast(c)).toBe(0);
      yield* B.awaitExn(t);
    });
  });
});

describe("Condition: cancellation", () => {
  it("a waiter cancelled while parked leaves the queue and gets the mutex back before Cancelled", async () => {
    const m = new Mutex();
    const c = new Condition();
    let heldInCatch: boolean | undefined;
    let released = false;
    await B.run(function* () {
      const w = B.spawn(function* () {
        yield* m.lock();
        try {
          yield* c.wait(m);
        } catch (e) {
          heldInCatch = m.holder === B.self();
          throw e;
        } finally {
          m.unlock();
        }
      });
      yield* pause(2);
      expect(c.waiters).toBe(1);
      // Another task holds the mutex when the cancellation arrives: the
      // cancelled waiter must wait for it before Cancelled reaches its body.
      const h = B.spawn(function* () {
        yield* m.lock();
        yield* pause(10);
        released = true;
        m.unlock();
      });
      yield* pause(2);
      expect(m.holder).toBe(h);
      yield* B.cancel(w);
      expect(released).toBe(true); // cancel could only end after h let go of the mutex
      expect(c.waiters).toBe(0);
      expect(errorOf(yield* B.awaitTask(w))).toBeInstanceOf(B.Cancelled);
      yield* B.awaitExn(h);
    });
    expect(heldInCatch).toBe(true);
    expect(m.isLocked).toBe(false);
    expect(m.waiters).toBe(0);
  });

  it("cancel returns only after the waiter re-acquired and released the mutex", async () => {
    const m = new Mutex();
    const c = new Condition();
    const log: string[] = [];
    await B.run(function* () {
      const w = B.spawn(function* () {
        yield* m.protect(function* () {
          try {
            yield* c.wait(m);
          } finally {
            log.push(`finally, holding: ${m.holder === B.self()}`);
          }
        });
      });
      yield* pause(2);
      expect(c.waiters).toBe(1);
      yield* B.cancel(w);
      log.push("cancel returned");
      expect(c.waiters).toBe(0);
      expect(m.isLocked).toBe(false);
    });
    expect(log).toEqual(["finally, holding: true", "cancel returned"]);
  });

  it("a waiter woken and then cancelled while re-acquiring the mutex passes the signal on", async () => {
    const m = new Mutex();
    const c = new Condition();
    const woken: string[] = [];
    await B.run(function* () {
      const mk = (name: string) =>
        B.spawn(function* () {
          yield* m.protect(function* () {
            yield* c.wait(m);
            woken.push(name);
          });
        });
      const w1 = mk("w1");
      const w2 = mk("w2");
      yield* pause(3);
      expect(c.waiters).toBe(2);
      // h holds the mutex, signals once (w1 is woken and then needs the mutex),
      // and keeps the mutex a while.
      const h = B.spawn(function* () {
        yield* m.lock();
        expect(c.signal()).toBe(true);
        yield* pause(10);
        m.unlock();
      });
      yield* pause(3);
      expect(m.holder).toBe(h);
      expect(m.waiters).toBe(1); // w1, woken, waits for the mutex
      expect(c.waiters).toBe(1); // w2
      // Cancel w1 while it waits for the mutex: it must still re-acquire it,
      // then pass its signal on to w2 (which nobody else will signal).
      yield* B.cancel(w1);
      yield* B.awaitExn(h);
      expect(errorOf(yield* B.awaitTask(w1))).toBeInstanceOf(B.Cancelled);
      yield* B.awaitExn(w2); // would be a Deadlock if the signal had been lost
    });
    expect(woken).toEqual(["w2"]);
    expect(c.waiters).toBe(0);
    expect(m.isLocked).toBe(false);
  });

  it("a signal given to a waiter cancelled and detached in the same step goes to the next waiter", async () => {
    const m = new Mutex();
    const c = new Condition();
    let signalResult: boolean | undefined;
    await B.run(function* () {
      const waiter = () =>
        B.spawn(function* () {
          yield* m.protect(function* () {
            yield* c.wait(m);
          });
          return "woken";
        });
      const w1 = waiter();
      const w2 = waiter();
      // x signals from its onCancellation handler, which runs inside our step
      // right after w1 was cancelled (and detached from its trigger).
      const x = B.spawn(function* () {
        yield* B.protect({ onCancellation: () => (signalResult = c.signal()) }, forever);
      });
      const winner = B.spawn(function* () {
        return "winner";
      });
      yield* pause(3);
      expect(c.waiters).toBe(2);
      yield* B.awaitFirst<unknown>([winner, w1, x]);
      expect(signalResult).toBe(true); // w1 could not take it; w2 did
      expect(yield* B.awaitExn(w2)).toBe("woken");
      expect(w1.status).toBe("cancelled");
    });
    expect(c.waiters).toBe(0);
    expect(m.isLocked).toBe(false);
  });
});
