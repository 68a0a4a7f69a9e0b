/**
 * The shared mutex in one domain, against the sources: it behaves as the
 * local one, and it follows its shared-memory protocol. Other domains are
 * played by writing their side of the protocol into the shared memory
 * directly; the real thing, with worker domains, is in `domains/`.
 */

import * as B from "@bobbin/core";
import { errorOf } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Mutex, MutexAlreadyHeld, MutexNotHolder, MutexNotLocked } from "../../src/index.js";
import { SLOTS, TICKET } from "../../src/shared/layout.js";
import { HOLDER_DOMAIN, HOLDER_TASK, LOCK, WANT } from "../../src/shared/mutex.js";
import { GRANTED, ORDER, STATE, WIDTH } from "../../src/shared/ticket.js";
import { forever, freeSlot, pause, sleep, slot, takeSlot, until } from "../helpers.js";

/** Another domain asks for the mutex in slot `i`. */
function remoteWants(cells: Int32Array, i: number): number {
  const base = takeSlot(cells, i, WIDTH);
  Atomics.store(cells, base + ORDER, Atomics.add(cells, TICKET, 1));
  Atomics.store(cells, base + STATE, WANT);
  return base + STATE;
}

/** The domain holding the lock hands it to slot `i`. */
function grant(cells: Int32Array, state: number): void {
  expect(Atomics.compareExchange(cells, state, WANT, GRANTED)).toBe(WANT);
  Atomics.notify(cells, state);
}

describe("Mutex.shared in one domain", () => {
  it("is a Mutex, with the local API: FIFO, tryLock, protect, guard, errors", async () => {
    const m = Mutex.shared();
    expect(m).toBeInstanceOf(Mutex);
    expect(m.isShared).toBe(true);
    expect(new Mutex().isShared).toBe(false);
    const order: number[] = [];
    await B.run(function* () {
      yield* m.lock();
      const ts = [1, 2, 3].map((i) =>
        B.spawn(function* () {
          yield* m.protect(function* () {
            order.push(i);
            yield* B.yieldNow();
          });
        }),
      );
      yield* pause();
      expect(m.waiters).toBe(3);
      expect(m.tryLock()).toBe(false);
      let again: unknown;
      try {
        yield* m.lock();
      } catch (e) {
        again = e;
      }
      expect(again).toBeInstanceOf(MutexAlreadyHeld);
      m.unlock();
      yield* B.awaitAll(ts);
      expect(order).toEqual([1, 2, 3]);
      {
        using _ = yield* m.guard();
        expect(m.holder).toBe(B.self());
      }
      expect(m.isLocked).toBe(false);
      expect(() => m.unlock()).toThrow(MutexNotLocked);
      expect(m.tryLock()).toBe(true);
      const child = yield* B.awaitTask(
        B.spawn(function* () {
          m.unlock();
        }),
      );
      expect(errorOf(child)).toBeInstanceOf(MutexNotHolder);
      expect((errorOf(child) as MutexNotHolder).holderDomain).toBe(0);
      m.unlock();
    });
    // Free, and nothing left in the shared memory.
    const cells = m.sharedLock!.cells;
    expect(Atomics.load(cells, LOCK)).toBe(0);
    expect(Atomics.load(cells, slot(0, WIDTH))).toBe(0);
  });

  it("a cancelled waiter leaves; a waiter cancelled after being handed the lock passes it on through protect", async () => {
    const m = Mutex.shared();
    await B.run(function* () {
      yield* m.lock();
      const a = B.spawn(function* () {
        yield* m.lock();
        yield* forever();
      });
      const b = B.spawn(function* () {
        yield* m.protect(forever);
      });
      const c = B.spawn(function* () {
        yield* m.protect(() => "c");
        return "c";
      });
      yield* pause();
      yield* B.cancel(a);
      expect(m.waiters).toBe(2);
      m.unlock(); // b gets it
      yield* pause();
      yield* B.cancel(b); // protect unlocks: c gets it
      expect(yield* B.awaitExn(c)).toBe("c");
      expect(m.isLocked).toBe(false);
    });
  });

  it("held by another domain: waits in its slot, is a typed error to unlock, and is taken when handed over", async () => {
    const m = Mutex.shared();
    const cells = m.sharedLock!.cells;
    Atomics.store(cells, LOCK, 1);
    Atomics.store(cells, HOLDER_DOMAIN, 3);
    Atomics.store(cells, HOLDER_TASK, 42);
    await B.run(function* () {
      expect(m.isLocked).toBe(true);
      expect(m.holder).toBe(null);
      expect(m.tryLock()).toBe(false);
      let error: unknown;
      try {
        m.unlock();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(MutexNotHolder);
      expect(error).toMatchObject({ holder: 42, holderDomain: 3 });
      expect(String(error)).toContain("held by task 42 of domain 3");
      const t = B.spawn(function* () {
        yield* m.lock();
        const mine = m.holder === B.self();
        m.unlock();
        return mine;
      });
      yield* pause();
      expect(m.waiters).toBe(1);
      const state = slot(0, WIDTH) + STATE;
      expect(Atomics.load(cells, state)).toBe(WANT);
      grant(cells, state);
      expect(yield* B.awaitExn(t)).toBe(true);
    });
    expect(Atomics.load(cells, LOCK)).toBe(0);
    expect(Atomics.load(cells, slot(0, WIDTH))).toBe(0); // the slot was given back
  });

  it("a waiter cancelled after its domain was handed the lock passes it on: freed, or handed to the next domain", async () => {
    const m = Mutex.shared();
    const cells = m.sharedLock!.cells;
    Atomics.store(cells, LOCK, 1);
    await B.run(function* () {
      const t = B.spawn(function* () {
        yield* m.lock();
      });
      yield* pause();
      const state = slot(0, WIDTH) + STATE;
      const other = remoteWants(cells, 9);
      // Handed over, and cancelled before this domain's event loop saw it.
      Atomics.compareExchange(cells, state, WANT, GRANTED);
      yield* B.cancel(t);
      expect(Atomics.load(cells, other)).toBe(GRANTED); // passed on to the domain waiting
      expect(Atomics.load(cells, LOCK)).toBe(1);
      expect(Atomics.load(cells, slot(0, WIDTH))).toBe(0);
      Atomics.notify(cells, state);
      yield* sleep();
      // That domain unlocks, nobody waits: free.
      freeSlot(cells, 9, WIDTH);
      Atomics.store(cells, LOCK, 0);
      expect(m.tryLock()).toBe(true);
      m.unlock();
    });
  });

  it("unlock hands the lock to the domain that waited longest; the local waiters ask again behind it", async () => {
    const m = Mutex.shared();
    const cells = m.sharedLock!.cells;
    await B.run(function* () {
      yield* m.lock();
      const local = B.spawn(function* () {
        yield* m.lock();
        m.unlock();
        return "local";
      });
      yield* pause();
      const second = remoteWants(cells, 11);
      const first = remoteWants(cells, 10);
      Atomics.store(cells, first - STATE + ORDER, Atomics.load(cells, second - STATE + ORDER) - 1); // 10 asked first
      m.unlock();
      expect(Atomics.load(cells, first)).toBe(GRANTED);
      expect(Atomics.load(cells, second)).toBe(WANT);
      expect(Atomics.load(cells, LOCK)).toBe(1);
      expect(Atomics.load(cells, HOLDER_DOMAIN)).toBe(-1);
      const mine = slot(0, WIDTH) + STATE;
      expect(Atomics.load(cells, mine)).toBe(WANT);
      expect(before(cells, second, mine)).toBe(true); // this domain is behind the other one
      // Domain of slot 10 is done: it hands the lock to the oldest, slot 11.
      freeSlot(cells, 10, WIDTH);
      grant(cells, second);
      // Slot 11 is done: it hands it here.
      freeSlot(cells, 11, WIDTH);
      grant(cells, mine);
      expect(yield* B.awaitExn(local)).toBe("local");
      expect(Atomics.load(cells, LOCK)).toBe(0);
    });
  });

  it("with every slot taken, a domain waits for one to be given back", async () => {
    const m = Mutex.shared();
    const cells = m.sharedLock!.cells;
    for (let i = 0; i < SLOTS; i++) takeSlot(cells, i, WIDTH);
    Atomics.store(cells, LOCK, 1);
    await B.run(function* () {
      const cancelled = B.spawn(function* () {
        yield* m.lock();
      });
      yield* pause();
      yield* B.cancel(cancelled); // left while waiting for a slot
      const t = B.spawn(function* () {
        yield* m.lock();
        m.unlock();
        return "got it";
      });
      yield* pause();
      freeSlot(cells, 5, WIDTH);
      const state = slot(5, WIDTH) + STATE;
      // The waiter hears of the freed slot on its event loop: give it time, under load too.
      yield* until(() => Atomics.load(cells, state) === WANT);
      expect(Atomics.load(cells, state)).toBe(WANT);
      grant(cells, state);
      expect(yield* B.awaitExn(t)).toBe("got it");
      expect(Atomics.load(cells, slot(5, WIDTH))).toBe(0);
    });
  });
});

function before(cells: Int32Array, stateA: number, stateB: number): boolean {
  return ((Atomics.load(cells, stateA - STATE + ORDER) - Atomics.load(cells, stateB - STATE + ORDER)) | 0) < 0;
}
