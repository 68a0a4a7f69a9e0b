import * as B from "@bobbin/core";
import { prng } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Condition, Mutex, Semaphore } from "../src/index.js";
import { pause } from "./helpers.js";

const SEEDS = [1, 2, 3, 42, 1337];

describe("stress: random waiters cancelled while the lock changes hands", () => {
  for (const seed of SEEDS) {
    it(`Mutex keeps exclusion, FIFO order and no leak (seed ${seed})`, async () => {
      const rand = prng(seed);
      const m = new Mutex();
      let inside = 0;
      let maxInside = 0;
      let requests = 0;
      const acquiredSeqs: number[] = [];
      const problems: string[] = [];
      let cancelled = 0;
      let completed = 0;
      const phase = new Map<B.Task, string>();
      const cancelledIn: Record<string, number> = { locking: 0, holding: 0, thinking: 0 };
      const WORKERS = 60;
      const ROUNDS = 25;

      function* worker(rng: () => number): Generator<B.Instruction, void, unknown> {
        for (let k = 0; k < ROUNDS; k++) {
          const seq = requests++; // the lock request is queued right after, synchronously
          phase.set(B.self(), "locking");
          yield* m.lock();
          phase.set(B.self(), "holding");
          try {
            acquiredSeqs.push(seq);
            if (m.holder !== B.self()) problems.push("lock returned without holding");
            inside++;
            maxInside = Math.max(maxInside, inside);
            try {
              yield* pause(Math.floor(rng() * 3)); // cancellations land here too
            } finally {
              inside--;
            }
          } finally {
            m.unlock();
          }
          phase.set(B.self(), "thinking");
          yield* pause(Math.floor(rng() * 4));
        }
      }

      await B.run(
        function* () {
          const live = new Set<B.Task<void>>();
          for (let i = 0; i < WORKERS; i++) live.add(B.spawn(worker, prng(seed * 1000 + i)));
          // Chaos: cancel random workers (most of them parked in lock) at random times.
          while (live.size > 0) {
            yield* pause(Math.floor(rand() * 6));
            for (const t of [...live])
              if (t.status !== "pending") {
                live.delete(t);
                const r = yield* B.awaitTask(t);
                if (!r.ok) problems.push(`worker failed: ${String(r.error)}`);
                completed++;
              }
            if (live.size > 0 && cancelled < WORKERS / 2 && rand() < 0.08) {
              const victims = [...live];
              const victim = victims[Math.floor(rand() * victims.length)]!;
              const wasWaiting = phase.get(victim) === "locking" && m.holder !== victim;
              cancelledIn[wasWaiting ? "locking" : (phase.get(victim) ?? "thinking")]!++;
              yield* B.cancel(victim);
              live.delete(victim);
              cancelled++;
              // The victim holds nothing and is queued nowhere once cancel returns.
              if (m.holder === victim) problems.push("a cancelled task still holds the lock");
            }
            if (m.waiters > live.size) problems.push(`${m.waiters} waiters for ${live.size} live workers`);
          }
        },
        { seed },
      );

      expect(problems).toEqual([]);
      expect(maxInside).toBe(1);
      expect(cancelled).toBeGreaterThan(5);
      expect(cancelledIn.locking).toBeGreaterThan(2); // parked in lock when cancelled
      expect(completed).toBeGreaterThan(5);
      // Fair FIFO: the lock was granted in the order it was requested.
      for (let i = 1; i < acquiredSeqs.length; i++) {
        if (acquiredSeqs[i]! <= acquiredSeqs[i - 1]!)
          throw new Error(`out of order at ${i}: ${acquiredSeqs[i - 1]} then ${acquiredSeqs[i]}`);
      }
      expect(m.isLocked).toBe(false);
      expect(m.waiters).toBe(0);
    });
  }

  for (const seed of SEEDS) {
    it(`bounded buffer loses and duplicates nothing when random consumers are cancelled (seed ${seed})`, async () => {
      const rand = prng(seed);
      const m = new Mutex();
      const notEmpty = new Condition();
      const notFull = new Condition();
      const items: number[] = [];
      const taken: number[] = [];
      const CAPACITY = 4;
      const TOTAL = 3000;
      let cancelledConsumers = 0;

      function* producer(from: number, count: number): Generator<B.Instruction, void, unknown> {
        for (let i = from; i < from + count; i++) {
          yield* m.protect(function* () {
            while (items.length === CAPACITY) yield* notFull.wait(m);
            items.push(i);
            notEmpty.signal();
          });
        }
      }

      function* consumer(rng: () => number): Generator<B.Instruction, void, unknown> {
        for (;;) {
          yield* m.protect(function* () {
            while (items.length === 0) yield* notEmpty.wait(m);
            taken.push(items.shift()!); // taken and recorded atomically: no suspension between
            notFull.signal();
          });
          yield* pause(Math.floor(rng() * 3));
        }
      }

      await B.run(
        function* () {
          const producers = [0, 1, 2].map((p) => B.spawn(producer, p * (TOTAL / 3), TOTAL / 3));
          const consumers: B.Task<void>[] = [];
          let n = 0;
          for (let i = 0; i < 4; i++) consumers.push(B.spawn(consumer, prng(seed + 100 + n++)));
          while (taken.length < TOTAL) {
            yield* pause(1 + Math.floor(rand() * 8));
            if (rand() < 0.5) {
              // Cancel a random consumer (parked in wait, in lock, or woken) and replace it.
              const i = Math.floor(rand() * consumers.length);
              yield* B.cancel(consumers[i]!);
              cancelledConsumers++;
              consumers[i] = B.spawn(consumer, prng(seed + 100 + n++));
            }
          }
          yield* B.awaitAll(producers);
          for (const c of consumers) yield* B.cancel(c);
        },
        { seed },
      );

      expect(cancelledConsumers).toBeGreaterThan(10);
      expect(taken.length).toBe(TOTAL);
      expect([...taken].sort((a, b) => a - b)).toEqual(Array.from({ length: TOTAL }, (_, i) => i));
      // Each producer's items were taken in its order.
      for (let p = 0; p < 3; p++) {
        const mine = taken.filter((i) => Math.floor(i / (TOTAL / 3)) === p);
        for (let i = 1; i < mine.length; i++) expect(mine[i]!).toBeGreaterThan(mine[i - 1]!);
      }
      expect(items).toEqual([]);
      expect([m.isLocked, m.waiters, notEmpty.waiters, notFull.waiters]).toEqual([false, 0, 0, 0]);
    });
  }

  for (const seed of SEEDS) {
    it(`Semaphore conserves permits when random acquirers are cancelled (seed ${seed})`, async () => {
      const rand = prng(seed);
      const PERMITS = 5;
      const s = new Semaphore(PERMITS);
      let inUse = 0;
      let maxInUse = 0;
      await B.run(
        function* () {
          const live = new Set<B.Task<void>>();
          for (let i = 0; i < 40; i++) {
            const rng = prng(seed * 77 + i);
            live.add(
              B.spawn(function* () {
                for (let k = 0; k < 20; k++) {
                  const n = 1 + Math.floor(rng() * 3);
                  yield* s.withPermits(n, function* () {
                    inUse += n;
                    maxInUse = Math.max(maxInUse, inUse);
                    try {
                      yield* pause(Math.floor(rng() * 3));
                    } finally {
                      inUse -= n;
                    }
                  });
                }
              }),
            );
          }
          while (live.size > 0) {
            yield* pause(Math.floor(rand() * 5));
            for (const t of [...live])
              if (t.status !== "pending") {
                live.delete(t);
                expect((yield* B.awaitTask(t)).ok).toBe(true);
              }
            if (live.size > 0 && rand() < 0.3) {
              const victim = [...live][Math.floor(rand() * live.size)]!;
              yield* B.cancel(victim);
              live.delete(victim);
            }
            // Permits handed to a woken waiter that has not run yet are in neither count.
            expect(s.available + inUse).toBeLessThanOrEqual(PERMITS);
            expect(s.available).toBeGreaterThanOrEqual(0);
          }
        },
        { seed },
      );
      expect(maxInUse).toBeLessThanOrEqual(PERMITS);
      expect(s.available).toBe(PERMITS);
      expect(s.waiters).toBe(0);
    });
  }
});
