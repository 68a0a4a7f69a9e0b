/**
 * The dining philosophers, after `test/philosophers/main.ml` in Miou's
 * repository: five philosophers think, get hungry, take the two forks
 * (mutexes) beside them and eat, for as long as the program was asked to
 * watch them; then they are all cancelled.
 *
 * It shows Miou's timeout design: start the work and a sleeper, `awaitFirst`
 * them, and the tasks still running when the time is up are cancelled. A
 * philosopher cancelled with a fork in hand gives it back: `Mutex.protect`
 * unlocks on cancellation.
 *
 * Deadlock is avoided as in Miou's program: every philosopher takes the
 * lower-numbered fork first (the fifth takes fork 1, then fork 5), so no
 * cycle of philosophers each holding one fork can form.
 *
 * Miou's philosophers are parallel tasks (`Prm.call`) sharing OCaml mutexes;
 * `@bobbin/sync`'s Mutex belongs to one domain, so here they are fibers of
 * one domain (`spawn`), which is what Miou's own `Mutex` requires too.
 */
import * as B from "@bobbin/core";
import { Mutex } from "@bobbin/sync";
import { sleep } from "@bobbin/unix";
import { Random } from "../support/random.js";

/** One meal: who ate, from when to when (`performance.now()`, ms). */
export interface Meal {
  readonly uid: number;
  readonly start: number;
  readonly end: number;
}

/** What a dinner needs: the output mutex, the randomness, the length of a "second", and a record of meals. */
export interface Table {
  /** Protects the output (Miou's `mo`). */
  readonly out: Mutex;
  readonly random: Random;
  /** How many real seconds a philosopher's "second" lasts (1 in Miou's program). */
  readonly unit: number;
  readonly meals: Meal[];
  readonly print: (line: string) => void;
}

const pad = (uid: number): string => String(uid).padStart(2, "0");

/**
 * A philosopher: thinks 2–7 "seconds", gets hungry, takes fork `a` then fork
 * `b`, eats 2–7 "seconds", puts them down; forever (until cancelled).
 *
 * @example
 * ```ts
 * B.spawn(philosopher, table, 1, forks[0], forks[1]);
 * ```
 */
export function* philosopher(table: Table, uid: number, a: Mutex, b: Mutex): Generator<B.Instruction, never, unknown> {
  const { out, random, unit, print } = table;
  for (;;) {
    const thinking = 2 + random.int(6);
    yield* out.protect(() => print(`${pad(uid)} thinks ${thinking}s`));
    yield* sleep(thinking * unit);
    yield* out.protect(() => print(`${pad(uid)} is hungry`));
    yield* a.protect(function* () {
      yield* b.protect(function* () {
        const eating = 2 + random.int(6);
        yield* out.protect(() => print(`${pad(uid)} eats ${eating}s`));
        const start = performance.now();
        try {
          yield* sleep(eating * unit);
        } finally {
          table.meals.push({ uid, start, end: performance.now() });
        }
      });
    });
  }
}

/** Options of {@link dinner}. */
export interface DinnerOptions {
  /** How many real seconds a philosopher's "second" lasts. Default 1. */
  readonly unit?: number;
  /** Seeds the philosophers' durations. Default: random. */
  readonly seed?: number;
  /** Where lines go. Default `console.log`. */
  readonly print?: (line: string) => void;
}

/**
 * Watches five philosophers for `seconds` real seconds, then cancels them
 * (Miou's `await_first_exn [ uid01; …; uid05; sleep ]`). Returns every meal
 * eaten, and the forks so that one can check they were all put down.
 *
 * @example
 * ```ts
 * await run(function* () { return yield* dinner(10); });
 * ```
 */
export function* dinner(
  seconds: number,
  options: DinnerOptions = {},
): Generator<B.Instruction, { meals: Meal[]; forks: Mutex[]; seed: number }, unknown> {
  const random = new Random(options.seed);
  const table: Table = { out: new Mutex(), random, unit: options.unit ?? 1, meals: [], print: options.print ?? console.log };
  const [m1, m2, m3, m4, m5] = [new Mutex(), new Mutex(), new Mutex(), new Mutex(), new Mutex()];
  const uid01 = B.spawn(philosopher, table, 1, m1, m2);
  const uid02 = B.spawn(philosopher, table, 2, m2, m3);
  const uid03 = B.spawn(philosopher, table, 3, m3, m4);
  const uid04 = B.spawn(philosopher, table, 4, m4, m5);
  const uid05 = B.spawn(philosopher, table, 5, m1, m5);
  const timer = B.spawn(function* () {
    yield* sleep(seconds);
  });
  const first = yield* B.awaitFirst<unknown>([uid01, uid02, uid03, uid04, uid05, timer]);
  if (!first.ok) throw first.error;
  return { meals: table.meals, forks: [m1, m2, m3, m4, m5], seed: random.seed };
}
