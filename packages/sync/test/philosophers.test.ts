import * as B from "@bobbin/core";
import { prng } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Mutex, Semaphore } from "../src/index.js";
import { pause } from "./helpers.js";

const N = 5;
const MEALS = 200;

interface Table {
  forks: Mutex[];
  eating: boolean[];
  meals: number[];
  violations: string[];
}

function table(): Table {
  return {
    forks: Array.from({ length: N }, () => new Mutex()),
    eating: new Array<boolean>(N).fill(false),
    meals: new Array<number>(N).fill(0),
    violations: [],
  };
}

function* eat(t: Table, i: number, left: Mutex, right: Mutex, rand: () => number): Generator<B.Instruction, void, unknown> {
  if (left.holder !== B.self() || right.holder !== B.self()) t.violations.push(`${i} eats without both forks`);
  if (t.eating[(i + 1) % N] || t.eating[(i + N - 1) % N]) t.violations.push(`${i} eats next to an eating neighbour`);
  t.eating[i] = true;
  t.meals[i]!++;
  yield* pause(1 + Math.floor(rand() * 3));
  t.eating[i] = false;
}

function check(t: Table): void {
  expect(t.violations).toEqual([]);
  expect(t.meals).toEqual(new Array<number>(N).fill(MEALS));
  for (const f of t.forks) {
    expect(f.isLocked).toBe(false);
    expect(f.waiters).toBe(0);
  }
}

describe("dining philosophers", () => {
  it("dine without deadlock when every philosopher takes the lower-numbered fork first", async () => {
    const t = table();
    await B.run(function* () {
      const philosophers = Array.from({ length: N }, (_, i) =>
        B.spawn(function* () {
          const rand = prng(i + 1);
          const a = t.forks[Math.min(i, (i + 1) % N)]!;
          const b = t.forks[Math.max(i, (i + 1) % N)]!;
          for (let k = 0; k < MEALS; k++) {
            yield* a.protect(function* () {
              yield* pause(Math.floor(rand() * 2)); // widen the window between the two forks
              yield* b.protect(eat, t, i, t.forks[i]!, t.forks[(i + 1) % N]!, rand);
            });
            yield* pause(Math.floor(rand() * 3)); // think
          }
        }),
      );
      for (const r of yield* B.awaitAll(philosophers)) expect(r.ok).toBe(true);
    });
    check(t);
  });

  it("dine without deadlock, left fork first, with a butler (Semaphore of N - 1 seats)", async () => {
    const t = table();
    const seats = new Semaphore(N - 1);
    await B.run(function* () {
      const philosophers = Array.from({ length: N }, (_, i) =>
        B.spawn(function* () {
          const rand = prng(100 + i);
          const left = t.forks[i]!;
          const right = t.forks[(i + 1) % N]!;
          for (let k = 0; k < MEALS; k++) {
            yield* seats.withPermits(1, function* () {
              using _l = yield* left.guard();
              yield* pause(Math.floor(rand() * 2));
              using _r = yield* right.guard();
              yield* eat(t, i, left, right, rand);
            });
            yield* pause(Math.floor(rand() * 3));
          }
        }),
      );
      for (const r of yield* B.awaitAll(philosophers)) expect(r.ok).toBe(true);
    });
    check(t);
    expect(seats.available).toBe(N - 1);
  });

  it("left fork first without a butler does deadlock (the control), and cancelling them frees every fork", async () => {
    const forks = Array.from({ length: N }, () => new Mutex());
    await B.run(function* () {
      const philosophers = Array.from({ length: N }, (_, i) =>
        B.spawn(function* () {
          yield* forks[i]!.protect(function* () {
            yield* pause(2); // everybody holds a left fork now
            yield* forks[(i + 1) % N]!.protect(() => undefined);
          });
        }),
      );
      yield* B.promise(() => new Promise((resolve) => setTimeout(resolve, 50)));
      // Stuck: every fork is held and has exactly one waiter.
      expect(philosophers.every((p) => p.status === "pending")).toBe(true);
      expect(forks.map((f) => [f.isLocked, f.waiters])).toEqual(new Array(N).fill([true, 1]));
      for (const p of philosophers) yield* B.cancel(p);
    });
    for (const f of forks) {
      expect(f.isLocked).toBe(false);
      expect(f.waiters).toBe(0);
    }
  });
});
