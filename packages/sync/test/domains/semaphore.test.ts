/**
 * A shared Semaphore across domains, with real worker domains. Workers run plain
 * JavaScript, so these tests use the built packages (`pnpm build` in core and
 * sync first; turbo does it before `test`) and the tasks in `fixtures/`.
 */
import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { Semaphore } from "../../dist/index.js";
import { sharedCells, sleep, until } from "../helpers.js";
import * as F from "./fixtures/tasks.mjs";

describe("a shared Semaphore across domains", () => {
  it("limits concurrency over all domains to its permits", async () => {
    const s = Semaphore.shared(2);
    const cells = sharedCells(2);
    await B.run(
      function* () {
        const remote = [1, 2, 1, 2].map((pin) => B.call({ pin }, F.limited, { s, cells, k: 15 }));
        const local = B.spawn(F.limited.body, { s, cells, k: 15 });
        const rs = yield* B.awaitAll([...remote, local]);
        expect(rs.every((r) => r.ok)).toBe(true);
      },
      { domains: 2 },
    );
    expect(Atomics.load(cells, 1)).toBeLessThanOrEqual(2);
    expect(Atomics.load(cells, 1)).toBe(2); // 5 tasks of 15 rounds: it was reached
    expect(Atomics.load(cells, 0)).toBe(0);
    expect(s.available).toBe(2);
  });

  it("a large request waiting in another domain is not overtaken by smaller ones", async () => {
    const s = Semaphore.shared(3);
    const cells = sharedCells(2);
    await B.run(
      function* () {
        yield* s.acquire(3);
        const big = B.call({ pin: 1 }, F.waitForPermits, { s, n: 3, cells });
        yield* until(() => Atomics.load(cells, 0) === 1);
        // Domain 1 waits for 3: a request for 1 from here queues behind it.
        s.release(1);
        expect(s.tryAcquire(1)).toBe(false);
        const small = B.spawn(function* () {
          yield* s.acquire(1);
          const bigDone = Atomics.load(cells, 1);
          s.release(1);
          return bigDone;
        });
        yield* sleep(5);
        expect(Atomics.load(cells, 1)).toBe(0);
        s.release(2);
        expect(yield* B.awaitExn(big)).toBe(1);
        expect(yield* B.awaitExn(small)).toBe(1); // served after the big one
        expect(s.available).toBe(3);
      },
      { domains: 1 },
    );
  });

  it("a waiter cancelled across domains takes no permit, and the others go on", async () => {
    const s = Semaphore.shared(1);
    const cells = sharedCells(2);
    await B.run(
      function* () {
        yield* s.acquire();
        const waiter = B.call({ pin: 1 }, F.waitForPermits, { s, n: 1, cells });
        yield* until(() => Atomics.load(cells, 0) === 1);
        yield* B.cancel(waiter);
        s.release();
        expect(s.available).toBe(1);
        expect(Atomics.load(cells, 1)).toBe(0);
        expect(s.tryAcquire()).toBe(true);
        s.release();
        expect(yield* B.awaitExn(B.call({ pin: 1 }, F.takeMany, { s, n: 1 }))).toBe(1);
        expect(s.available).toBe(1);
      },
      { domains: 1 },
    );
  });
});
