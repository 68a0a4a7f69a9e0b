/**
 * The shared (cross-domain) variants in one domain, against the sources: they
 * behave as the local ones, and they follow the shared-memory protocol. Other
 * domains are played by writing their side of the protocol into the shared
 * memory directly; the real thing, with worker domains, is in `domains/`.
 */
import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { Condition, Mutex, MutexAlreadyHeld, MutexNotHolder, MutexNotLocked, Semaphore } from "../src/index.js";
import { FREED, HEADER, OWN, SLOTS, SPAN, TICKET } from "../src/shared.js";
import { errorOf, forever, pause } from "./helpers.js";

/** Lets Node's loop run: wake-ups from other domains (`Atomics.waitAsync`) arrive through it. */
const sleep = (ms = 1) => B.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)));

/** Sleeps until `condition` holds, for 5 s at most (then the test's expectation reports it). */
function* until(condition: () => boolean): Generator<B.Instruction, void, unknown> {
  for (const deadline = Date.now() + 5000; !condition() && Date.now() < deadline; ) yield* sleep();
}

/** Slot words (every kind): the owner flag first. */
const slot = (i: number, width: number) => HEADER + i * width;

/** Another domain takes slot `i` of `cells` (as `claim` does). */
function takeSlot(cells: Int32Array, i: number, width: number): number {
  const base = slot(i, width);
  Atomics.store(cells, base, 1);
  if (Atomics.load(cells, SPAN) <= i) Atomics.store(cells, SPAN, i + 1);
  return base;
}

function freeSlot(cells: Int32Array, i: number, width: number): void {
  for (let w = 1; w < width; w++) Atomics.store(cells, slot(i, width) + w, 0);
  Atomics.store(cells, slot(i, width), 0);
  Atomics.add(cells, FREED, 1);
  Atomics.notify(cells, FREED);
}

// Mutex layout (see mutex.ts).
const LOCK = OWN;
const HOLDER_DOMAIN = OWN + 1;
const HOLDER_TASK = OWN + 2;
const M_WIDTH = 3;
const M_STATE = 1;
const M_ORDER = 2;
const WANT = 1;
const GRANTED = 2;

/** Another domain asks for the mutex in slot `i`. */
function remoteWants(cells: Int32Array, i: number): number {
  const base = takeSlot(cells, i, M_WIDTH);
  Atomics.store(cells, base + M_ORDER, Atomics.add(cells, TICKET, 1));
  Atomics.store(cells, base + M_STATE, WANT);
  return base + M_STATE;
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
    expect(Atomics.load(cells, slot(0, M_WIDTH))).toBe(0);
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
      const state = slot(0, M_WIDTH) + M_STATE;
      expect(Atomics.load(cells, state)).toBe(WANT);
      grant(cells, state);
      expect(yield* B.awaitExn(t)).toBe(true);
    });
    expect(Atomics.load(cells, LOCK)).toBe(0);
    expect(Atomics.load(cells, slot(0, M_WIDTH))).toBe(0); // the slot was given back
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
      const state = slot(0, M_WIDTH) + M_STATE;
      const other = remoteWants(cells, 9);
      // Handed over, and cancelled before this domain's event loop saw it.
      Atomics.compareExchange(cells, state, WANT, GRANTED);
      yield* B.cancel(t);
      expect(Atomics.load(cells, other)).toBe(GRANTED); // passed on to the domain waiting
      expect(Atomics.load(cells, LOCK)).toBe(1);
      expect(Atomics.load(cells, slot(0, M_WIDTH))).toBe(0);
      Atomics.notify(cells, state);
      yield* sleep();
      // That domain unlocks, nobody waits: free.
      freeSlot(cells, 9, M_WIDTH);
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
      Atomics.store(cells, first - M_STATE + M_ORDER, Atomics.load(cells, second - M_STATE + M_ORDER) - 1); // 10 asked first
      m.unlock();
      expect(Atomics.load(cells, first)).toBe(GRANTED);
      expect(Atomics.load(cells, second)).toBe(WANT);
      expect(Atomics.load(cells, LOCK)).toBe(1);
      expect(Atomics.load(cells, HOLDER_DOMAIN)).toBe(-1);
      const mine = slot(0, M_WIDTH) + M_STATE;
      expect(Atomics.load(cells, mine)).toBe(WANT);
      expect(before(cells, second, mine)).toBe(true); // this domain is behind the other one
      // Domain of slot 10 is done: it hands the lock to the oldest, slot 11.
      freeSlot(cells, 10, M_WIDTH);
      grant(cells, second);
      // Slot 11 is done: it hands it here.
      freeSlot(cells, 11, M_WIDTH);
      grant(cells, mine);
      expect(yield* B.awaitExn(local)).toBe("local");
      expect(Atomics.load(cells, LOCK)).toBe(0);
    });
  });

  it("with every slot taken, a domain waits for one to be given back", async () => {
    const m = Mutex.shared();
    const cells = m.sharedLock!.cells;
    for (let i = 0; i < SLOTS; i++) takeSlot(cells, i, M_WIDTH);
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
      freeSlot(cells, 5, M_WIDTH);
      const state = slot(5, M_WIDTH) + M_STATE;
      // The waiter hears of the freed slot on its event loop: give it time, under load too.
      yield* until(() => Atomics.load(cells, state) === WANT);
      expect(Atomics.load(cells, state)).toBe(WANT);
      grant(cells, state);
      expect(yield* B.awaitExn(t)).toBe("got it");
      expect(Atomics.load(cells, slot(5, M_WIDTH))).toBe(0);
    });
  });
});

function before(cells: Int32Array, stateA: number, stateB: number): boolean {
  return ((Atomics.load(cells, stateA - M_STATE + M_ORDER) - Atomics.load(cells, stateB - M_STATE + M_ORDER)) | 0) < 0;
}

// Semaphore layout (see semaphore.ts).
const PERMITS = OWN;
const WAITING = OWN + 1;
const S_WIDTH = 3;
const S_STATE = 1;
const S_ORDER = 2;

describe("Semaphore.shared in one domain", () => {
  it("is a Semaphore with the local API: FIFO, no overtaking, cancellation, withPermits", async () => {
    const s = Semaphore.shared(2);
    expect(s.isShared).toBe(true);
    const order: string[] = [];
    await B.run(function* () {
      yield* s.acquire(2);
      const big = B.spawn(function* () {
        yield* s.acquire(2);
        order.push("big");
        s.release(2);
      });
      const small = B.spawn(function* () {
        yield* s.withPermits(1, () => order.push("small"));
      });
      const gone = B.spawn(function* () {
        yield* s.acquire(1);
      });
      yield* pause();
      expect(s.waiters).toBe(3);
      expect(s.tryAcquire()).toBe(false);
      s.release(1);
      yield* pause();
      expect(order).toEqual([]); // small does not overtake big
      yield* B.cancel(gone);
      s.release(1);
      yield* B.awaitAll([big, small]);
      expect(order).toEqual(["big", "small"]);
      expect(s.available).toBe(2);
      // The head leaving lets the smaller ones behind it go.
      yield* s.acquire(2);
      const head = B.spawn(function* () {
        yield* s.acquire(2);
      });
      const behind = B.spawn(function* () {
        yield* s.acquire(1);
        return "behind";
      });
      yield* pause();
      s.release(1);
      yield* B.cancel(head);
      expect(yield* B.awaitExn(behind)).toBe("behind");
      s.release(2);
    });
    expect(s.available).toBe(2);
    const cells = s.sharedPermits!.cells;
    expect(Atomics.load(cells, WAITING)).toBe(0);
    expect(() => Semaphore.shared(2 ** 31)).toThrow(RangeError);
    expect(() => Semaphore.shared(2 ** 31 - 1).release()).toThrow(RangeError);
  });

  it("a domain that asked first is served first, and newcomers queue behind it", async () => {
    const s = Semaphore.shared(0);
    const cells = s.sharedPermits!.cells;
    // Another domain waits for 3 permits.
    const base = takeSlot(cells, 10, S_WIDTH);
    Atomics.store(cells, base + S_ORDER, Atomics.add(cells, TICKET, 1));
    Atomics.add(cells, WAITING, 1);
    Atomics.store(cells, base + S_STATE, 3 + 1);
    await B.run(function* () {
      s.release(2);
      expect(s.tryAcquire(1)).toBe(false); // another domain waits
      const local = B.spawn(function* () {
        yield* s.acquire(1);
        return "local";
      });
      yield* pause();
      expect(s.waiters).toBe(1);
      s.release(1);
      expect(Atomics.load(cells, base + S_STATE)).toBe(-1); // granted: 3 permits taken for it
      expect(s.available).toBe(0);
      s.release(1); // the local waiter's turn now
      expect(yield* B.awaitExn(local)).toBe("local");
      expect(Atomics.load(cells, WAITING)).toBe(0);
    });
  });

  it("permits granted to a domain whose waiter was cancelled meanwhile go back", async () => {
    const s = Semaphore.shared(0);
    const cells = s.sharedPermits!.cells;
    await B.run(function* () {
      const t = B.spawn(function* () {
        yield* s.acquire(2);
      });
      yield* pause();
      const state = slot(0, S_WIDTH) + S_STATE;
      expect(Atomics.load(cells, state)).toBe(2 + 1);
      // Another domain releases 2 and grants them here; the waiter is cancelled before this domain sees it.
      Atomics.store(cells, PERMITS, 0);
      Atomics.sub(cells, WAITING, 1);
      Atomics.store(cells, state, -1);
      yield* B.cancel(t);
      expect(s.available).toBe(2);
      expect(Atomics.load(cells, slot(0, S_WIDTH))).toBe(0);
    });
  });
});

// Condition layout (see condition.ts).
const C_WIDTH = 3;
const AVAIL = 1;
const TOKENS = 2;

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
    expect(Atomics.load(c.signals!.cells, slot(0, C_WIDTH))).toBe(0);
  });

  it("signals reach the waiters of other domains through their slot", async () => {
    const c = Condition.shared();
    const cells = c.signals!.cells;
    const base = takeSlot(cells, 7, C_WIDTH);
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
      const mine = slot(0, C_WIDTH);
      expect(Atomics.load(cells, mine + AVAIL)).toBe(1);
      const elsewhere = takeSlot(cells, 3, C_WIDTH);
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
    for (let i = 0; i < SLOTS; i++) takeSlot(cells, i, C_WIDTH);
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
      freeSlot(cells, 12, C_WIDTH);
      expect(yield* B.awaitExn(t)).toBe("woken");
    });
  });
});
