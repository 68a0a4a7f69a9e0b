/**
 * The shared condition in one domain, against the sources: it behaves as the
 * local one, and it follows its shared-memory protocol (other domains played
 * by hand; with worker domains in `domains/`).
 */

import * as B from "@bobbin/core";
import { errorOf } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Condition, Mutex, MutexNotHolder } from "../../src/index.js";
import { AVAIL, CONDITION, TOKENS } from "../../src/shared/condition.js";
import { SLOTS } from "../../src/shared/layout.js";
import { freeSlot, pause, sleep, slot, takeSlot } from "../helpers.js";

describe("Condition.shared in one domain", () => {
  it("is a Condition with the local API: signal, broadcast, cancellation", async () => {
    const m = Mutex.shared();
    const c = Condition.shared();
    expect(c.isShared).toBe(true);
    let ready = 0;
    await B.run(function* () {
      const waiter = (i: number) =>
        B.spawn(function* () {
          yield* m.protect(function* () {
            while (ready < i) yield* c.wait(m);
          });
          return i;
        });
      const ws = [1, 2, 3].map(waiter);
      yield* pause(3);
      expect(c.waiters).toBe(3);
      yield* m.protect(() => {
        ready = 1;
        expect(c.signal()).toBe(true);
      });
      expect(yield* B.awaitExn(ws[0]!)).toBe(1);
      yield* B.cancel(ws[1]!);
      expect(c.waiters).toBe(1);
      yield* m.protect(() => {
        ready = 3;
        expect(c.broadcast()).toBe(1);
      });
      expect(yield* B.awaitExn(ws[2]!)).toBe(3);
      expect(c.signal()).toBe(false);
      const notHeld = yield* B.awaitTask(
        B.spawn(function* () {
          yield* c.wait(m);
        }),
      );
      expect(errorOf(notHeld)).toBeInstanceOf(MutexNotHolder);
    });
    expect(Atomics.load(c.signals!.cells, slot(0, CONDITION.width))).toBe(0);
  });

  it("signals reach the waiters of other domains through their slot", async () => {
    const c = Condition.shared();
    const cells = c.signals!.cells;
    const base = takeSlot(cells, 7, CONDITION.width);
    Atomics.store(cells, base + AVAIL, 2); // two waiters over there
    expect(c.signal()).toBe(true);
    expect(Atomics.load(cells, base + AVAIL)).toBe(1);
    expect(Atomics.load(cells, base + TOKENS)).toBe(1);
    expect(c.broadcast()).toBe(1);
    expect(Atomics.load(cells, base + TOKENS)).toBe(2);
    expect(c.signal()).toBe(false);
  });

  it("a waiter cancelled after a signal from another domain picked it passes that signal on", async () => {
    const m = new Mutex();
    const c = Condition.shared();
    const cells = c.signals!.cells;
    await B.run(function* () {
      const picked = B.spawn(function* () {
        yield* m.protect(function* () {
          yield* c.wait(m);
        });
      });
      yield* pause(2);
      const mine = slot(0, CONDITION.width);
      expect(Atomics.load(cells, mine + AVAIL)).toBe(1);
      const elsewhere = takeSlot(cells, 3, CONDITION.width);
      Atomics.store(cells, elsewhere + AVAIL, 1);
      // Another domain signals: it picks our waiter; its token is on the way.
      expect(Atomics.compareExchange(cells, mine + AVAIL, 1, 0)).toBe(1);
      yield* B.cancel(picked); // it owed that token: the signal goes on, to the other domain's waiter
      expect(Atomics.load(cells, elsewhere + AVAIL)).toBe(0);
      expect(Atomics.load(cells, elsewhere + TOKENS)).toBe(1);
      const second = B.spawn(function* () {
        yield* m.protect(function* () {
          yield* c.wait(m);
        });
        return "second";
      });
      yield* pause(2);
      // The token arrives: it was paid already, so it is dropped, not given to `second`.
      Atomics.add(cells, mine + TOKENS, 1);
      Atomics.notify(cells, mine + TOKENS);
      yield* sleep(5);
      expect(second.status).toBe("pending");
      expect(Atomics.load(cells, mine + AVAIL)).toBe(1);
      expect(c.signal()).toBe(true); // the only waiter left anywhere
      expect(yield* B.awaitExn(second)).toBe("second");
    });
  });

  it("with every slot taken, a waiter is woken (spuriously) once one is given back", async () => {
    const m = new Mutex();
    const c = Condition.shared();
    const cells = c.signals!.cells;
    for (let i = 0; i < SLOTS; i++) takeSlot(cells, i, CONDITION.width);
    let ready = false;
    await B.run(function* () {
      const t = B.spawn(function* () {
        yield* m.protect(function* () {
          while (!ready) yield* c.wait(m);
        });
        return "woken";
      });
      yield* pause(2);
      ready = true;
      expect(c.signal()).toBe(false); // it could not be counted anywhere
      freeSlot(cells, 12, CONDITION.width);
      expect(yield* B.awaitExn(t)).toBe("woken");
    });
  });
});
