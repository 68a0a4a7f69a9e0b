/**
 * A shared Mutex across domains, with real worker domains. Workers run plain
 * JavaScript, so these tests use the built packages (`pnpm build` in core and
 * sync first; turbo does it before `test`) and the tasks in `fixtures/`.
 */
import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { Mutex, MutexNotHolder, MutexNotLocked } from "../../dist/index.js";
import { sharedCells, sleep, until } from "../helpers.js";
import * as F from "./fixtures/tasks.mjs";

describe("a shared Mutex across domains", () => {
  it("protects a non-atomic read-modify-write: N tasks × k on 2 workers and dom0 count exactly N × k", async () => {
    const m = Mutex.shared();
    const cells = sharedCells(1);
    const k = 300;
    const where = await B.run(
      function* () {
        const remote = [1, 2, 1, 2].map((pin) => B.call({ pin }, F.increment, { m, cells, k }));
        const local = [B.spawn(F.increment.body, { m, cells, k }), B.spawn(F.increment.body, { m, cells, k })];
        return yield* B.awaitAll([...remote, ...local]);
      },
      { domains: 2 },
    );
    expect(where.map((r) => (r.ok ? r.value : String(r.error)))).toEqual([1, 2, 1, 2, 0, 0]);
    expect(cells[0]).toBe(6 * k);
    expect(m.isLocked).toBe(false);
  });

  it("works through B.parallel, with the mutex nested in the inputs", async () => {
    const m = Mutex.shared();
    const cells = sharedCells(1);
    const results = await B.run(
      function* () {
        return yield* B.parallel(
          F.increment,
          Array.from({ length: 6 }, () => ({ m, cells, k: 100 })),
        );
      },
      { domains: 3 },
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(cells[0]).toBe(600);
  });

  it("a task waiting for the lock does not block its domain", async () => {
    const m = Mutex.shared();
    const cells = sharedCells(2);
    await B.run(
      function* () {
        yield* m.lock();
        const waiter = B.call({ pin: 1 }, F.waitForLock, { m, cells });
        yield* until(() => Atomics.load(cells, 0) === 1);
        // Domain 1 has a task parked on the lock, and still runs other calls.
        expect(yield* B.awaitExn(B.call({ pin: 1 }, F.whereAmI))).toBe(1);
        expect(Atomics.load(cells, 1)).toBe(0);
        m.unlock();
        expect(yield* B.awaitExn(waiter)).toBe("locked");
        expect(Atomics.load(cells, 1)).toBe(1);
      },
      { domains: 1 },
    );
  });

  it("a waiter cancelled across domains leaves, and the lock stays usable", async () => {
    const m = Mutex.shared();
    const cells = sharedCells(2);
    const counter = sharedCells(1);
    await B.run(
      function* () {
        yield* m.lock();
        const waiter = B.call({ pin: 1 }, F.waitForLock, { m, cells });
        yield* until(() => Atomics.load(cells, 0) === 1);
        yield* B.cancel(waiter);
        expect((yield* B.awaitTask(waiter)).ok).toBe(false);
        m.unlock();
        expect(m.isLocked).toBe(false);
        // Both domains can still take it, and the cancelled waiter never did.
        yield* B.awaitExn(B.call({ pin: 1 }, F.increment, { m, cells: counter, k: 10 }));
        yield* m.protect(() => counter[0]!++);
        expect(counter[0]).toBe(11);
        expect(Atomics.load(cells, 1)).toBe(0);
      },
      { domains: 1 },
    );
  });

  it("random cancellations while the lock changes hands between 3 domains leave it free and consistent (5 seeds)", async () => {
    for (let seed = 1; seed <= 5; seed++) {
      const m = Mutex.shared();
      const cells = sharedCells(1);
      let rnd = seed;
      const next = () => (rnd = (rnd * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
      await B.run(
        function* () {
          const calls = Array.from({ length: 8 }, (_, i) =>
            B.call({ pin: 1 + (i % 2) }, F.churn, { m, cells, k: 40, seed: seed * 100 + i }),
          );
          const locals = Array.from({ length: 2 }, (_, i) => B.spawn(F.churn.body, { m, cells, k: 40, seed: seed * 1000 + i }));
          for (const t of calls) {
            yield* sleep(Math.floor(next() * 4));
            if (next() < 0.5) yield* B.cancel(t);
          }
          const rs = yield* B.awaitAll([...calls, ...locals]);
          for (const r of rs) if (!r.ok) expect(r.error).toBeInstanceOf(B.Cancelled);
          // The lock is free everywhere: every domain takes it at once.
          expect(m.isLocked).toBe(false);
          expect(m.tryLock()).toBe(true);
          m.unlock();
          const before = cells[0]!;
          yield* B.awaitExn(B.call({ pin: 1 }, F.increment, { m, cells, k: 5 }));
          yield* B.awaitExn(B.call({ pin: 2 }, F.increment, { m, cells, k: 5 }));
          expect(cells[0]).toBe(before + 10);
        },
        { domains: 2, seed },
      );
    }
  });

  it("unlock by a task of another domain that does not hold it is MutexNotHolder, naming holder and domain", async () => {
    const m = Mutex.shared();
    const cells = sharedCells(2);
    await B.run(
      function* () {
        yield* m.lock();
        const me = B.self().uid;
        // Seen in the worker, and as the failure of the call in dom0 (the error keeps its class).
        const seen = yield* B.awaitExn(B.call({ pin: 1 }, F.unlockAndReport, m));
        expect(seen).toMatchObject({ typed: true, holder: me, holderDomain: 0 });
        const r = yield* B.awaitTask(B.call({ pin: 1 }, F.unlockIt, m));
        expect(r.ok).toBe(false);
        const error = (r as { error: Error }).error;
        expect(error).toBeInstanceOf(MutexNotHolder);
        expect(error.message).toContain(`held by task ${me} of domain 0`);
        expect((error as MutexNotHolder).holderDomain).toBe(0);
        m.unlock();
        // Unlocked: MutexNotLocked, in the worker as here.
        const free = yield* B.awaitTask(B.call({ pin: 1 }, F.unlockIt, m));
        expect((free as { error: Error }).error).toBeInstanceOf(MutexNotLocked);

        // The other way round: a worker holds it, dom0 tries.
        const holder = B.call({ pin: 1 }, F.holdUntil, { m, cells });
        yield* until(() => Atomics.load(cells, 1) === 1);
        let error2: unknown;
        try {
          m.unlock();
        } catch (e) {
          error2 = e;
        }
        expect(error2).toBeInstanceOf(MutexNotHolder);
        expect((error2 as MutexNotHolder).holderDomain).toBe(1);
        Atomics.store(cells, 0, 1);
        expect((error2 as MutexNotHolder).holder).toBe(yield* B.awaitExn(holder));
      },
      { domains: 1 },
    );
  });
});
