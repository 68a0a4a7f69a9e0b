/**
 * The shared semaphore in one domain, against the sources: it behaves as the
 * local one, and it follows its shared-memory protocol (other domains played
 * by hand; with worker domains in `domains/`).
 */
import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { Semaphore } from "../../src/index.js";
import { TICKET } from "../../src/shared/layout.js";
import { PERMITS, WAITING } from "../../src/shared/semaphore.js";
import { GRANTED, ORDER, STATE, WIDTH } from "../../src/shared/ticket.js";
import { pause, slot, takeSlot } from "../helpers.js";

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
    const base = takeSlot(cells, 10, WIDTH);
    Atomics.store(cells, base + ORDER, Atomics.add(cells, TICKET, 1));
    Atomics.add(cells, WAITING, 1);
    Atomics.store(cells, base + STATE, 3 + 1);
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
      expect(Atomics.load(cells, base + STATE)).toBe(GRANTED); // 3 permits taken for it
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
      const state = slot(0, WIDTH) + STATE;
      expect(Atomics.load(cells, state)).toBe(2 + 1);
      // Another domain releases 2 and grants them here; the waiter is cancelled before this domain sees it.
      Atomics.store(cells, PERMITS, 0);
      Atomics.sub(cells, WAITING, 1);
      Atomics.store(cells, state, GRANTED);
      yield* B.cancel(t);
      expect(s.available).toBe(2);
      expect(Atomics.load(cells, slot(0, WIDTH))).toBe(0);
    });
  });
});
