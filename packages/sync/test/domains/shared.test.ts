/**
 * Mutex, Condition and Semaphore across domains, with real worker domains.
 * Workers run plain JavaScript, so these tests use the built packages
 * (`pnpm build` in core and sync first; turbo does it before `test`) and the
 * tasks in `fixtures/`.
 */
import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { Condition, Mutex, MutexNotHolder, MutexNotLocked, Semaphore } from "../../dist/index.js";
import * as F from "./fixtures/tasks.mjs";

const cellsOf = (n: number) => new Int32Array(new SharedArrayBuffer(4 * n));

/** Lets Node's loop run (other domains' wake-ups arrive through it). */
const sleep = (ms: number) => B.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)));

function* until(test: () => boolean): Generator<B.Instruction, void, unknown> {
  const deadline = Date.now() + 10_000;
  while (!test()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the other domains");
    yield* sleep(1);
  }
}

describe("a shared Mutex across domains", () => {
  it("protects a non-atomic read-modify-write: N tasks × k on 2 workers and dom0 count exactly N × k", async () => {
    const m = Mutex.shared();
    const cells = cellsOf(1);
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
    const cells = cellsOf(1);
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

  it("is one object per domain, and comes back as the very same object", async () => {
    const m = Mutex.shared();
    const out = await B.run(
      function* () {
        return yield* B.awaitExn(B.call(F.identity, { a: m, b: m }));
      },
      { domains: 1 },
    );
    expect(out.same).toBe(true);
    expect(out.m).toBe(m);
    expect(out.nested[0]!.m).toBe(m);
  });

  it("local primitives refuse to cross, naming the shared factory", async () => {
    await B.run(
      function* () {
        expect(() => B.call(F.increment, { m: new Mutex(), cells: cellsOf(1), k: 1 })).toThrow(/Mutex\.shared\(\)/);
        expect(() => B.call(F.increment, { m: new Mutex(), cells: cellsOf(1), k: 1 })).toThrow(TypeError);
        const m = Mutex.shared();
        expect(() => B.call(F.waitForFlag, { m, c: new Condition(), cells: cellsOf(2) })).toThrow(/Condition\.shared\(\)/);
        let error: unknown;
        try {
          yield* B.parallel(F.limited, [
            { s: Semaphore.shared(1), cells: cellsOf(2), k: 1 },
            { s: new Semaphore(1), cells: cellsOf(2), k: 1 },
          ]);
        } catch (e) {
          error = e;
        }
        expect(String(error)).toMatch(/Semaphore\.shared\(n\)/);
      },
      { domains: 1 },
    );
  });

  it("a task waiting for the lock does not block its domain", async () => {
    const m = Mutex.shared();
    const cells = cellsOf(2);
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
    const cells = cellsOf(2);
    const counter = cellsOf(1);
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
      const cells = cellsOf(1);
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
    const cells = cellsOf(2);
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

describe("a shared Semaphore across domains", () => {
  it("limits concurrency over all domains to its permits", async () => {
    const s = Semaphore.shared(2);
    const cells = cellsOf(2);
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
    const cells = cellsOf(2);
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
    const cells = cellsOf(2);
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

describe("a shared Condition across domains", () => {
  it("broadcast wakes the waiters of every domain", async () => {
    const m = Mutex.shared();
    const c = Condition.shared();
    const cells = cellsOf(2);
    const where = await B.run(
      function* () {
        const waiters = [1, 2, 1, 2].map((pin) => B.call({ pin }, F.waitForFlag, { m, c, cells }));
        yield* until(() => Atomics.load(cells, 1) === 4);
        const woken = yield* m.protect(() => {
          Atomics.store(cells, 0, 1);
          return c.broadcast();
        });
        expect(woken).toBe(4);
        return (yield* B.awaitAll(waiters)).map((r) => (r.ok ? r.value : String(r.error)));
      },
      { domains: 2 },
    );
    expect(where).toEqual([1, 2, 1, 2]);
  });

  it("signal goes back and forth between domains (ping-pong, 200 rounds)", async () => {
    const m = Mutex.shared();
    const c = Condition.shared();
    const cells = cellsOf(1);
    const rounds = 200;
    const last = await B.run(
      function* () {
        const other = B.call({ pin: 1 }, F.pong, { m, c, cells, rounds });
        for (let i = 0; i < rounds; i++) {
          yield* m.protect(function* () {
            while (cells[0]! % 2 === 1) yield* c.wait(m);
            cells[0]!++;
            c.signal();
          });
        }
        return yield* B.awaitExn(other);
      },
      { domains: 1 },
    );
    expect(last).toBe(2 * rounds);
    expect(cells[0]).toBe(2 * rounds);
  });

  it("a waiter cancelled in another domain does not swallow a signal", async () => {
    const m = Mutex.shared();
    const c = Condition.shared();
    const a = cellsOf(2);
    const b = cellsOf(2);
    await B.run(
      function* () {
        const first = B.call({ pin: 1 }, F.waitForFlag, { m, c, cells: a });
        yield* until(() => Atomics.load(a, 1) === 1);
        const second = B.call({ pin: 2 }, F.waitForFlag, { m, c, cells: b });
        yield* until(() => Atomics.load(b, 1) === 1);
        yield* B.cancel(first);
        yield* m.protect(() => {
          Atomics.store(b, 0, 1);
          expect(c.signal()).toBe(true); // the only waiter left is the second
        });
        expect(yield* B.awaitExn(second)).toBe(2);
        expect(c.signal()).toBe(false);
      },
      { domains: 2 },
    );
  });
});
