/**
 * Chapter 3's programs, on the toy scheduler of `toy-scheduler.ts`.
 */
import { awaitPromise, run, spawn } from "./toy-scheduler.js";

/** The book's `My_exception`. */
export class MyException extends Error {
  override readonly name = "MyException";
}

/**
 * The book's first example of a jump in the flow of a program: an
 * exception. Prints `Hello`, then the handler's `My_exception`; `World` is
 * never printed: an exception does not come back.
 *
 * @example
 * ```ts
 * exceptionJump();   // Hello\nMy_exception
 * ```
 */
export function exceptionJump(): void {
  try {
    console.log("Hello");
    throw new MyException();
    // console.log("World") would never run
  } catch (error) {
    if (!(error instanceof MyException)) throw error;
    console.log("My_exception");
  }
}

/** The book's `My_effect`, as the value a generator yields. */
export const MY_EFFECT = Symbol("My_effect");

/**
 * The book's `my_program`: performs `My_effect` between two lines. With a
 * generator, performing an effect is yielding it.
 */
export function* myProgram(): Generator<typeof MY_EFFECT, void, void> {
  console.log("Hello");
  yield MY_EFFECT;
  console.log("World");
}

/**
 * The book's effect handler `run fn v`: runs the generator; on `My_effect`
 * it prints `My_effect` and continues the function where it stopped (`continue
 * k ()`), which an exception handler cannot do. Prints `Hello`, `My_effect`,
 * `World`.
 *
 * @example
 * ```ts
 * handleEffects(myProgram);   // Hello\nMy_effect\nWorld
 * ```
 */
export function handleEffects(fn: () => Generator<typeof MY_EFFECT, void, void>): void {
  const k = fn();
  for (let r = k.next(); r.done !== true; r = k.next()) {
    if (r.value === MY_EFFECT) console.log("My_effect");
  }
}

/** The book's `fn`: what we want done "in the background". */
function* fn(): Generator<never, void, unknown> {
  console.log("World");
}

/**
 * The book's "Let's play!": `fn` is spawned, "Hello" is printed, then the
 * program waits for `fn`. Prints `Hello` then `World`.
 *
 * @example
 * ```ts
 * helloWorld();   // Hello\nWorld
 * ```
 */
export function helloWorld(): void {
  run(function* () {
    const prm = yield* spawn(fn);
    console.log("Hello");
    yield* awaitPromise(prm);
  });
}

/** The `n`-th prime (2 is the first), by trial division: a hefty computation. */
export function nthPrime(n: number): number {
  let found = 0;
  for (let candidate = 2; ; candidate++) {
    let prime = true;
    for (let d = 2; d * d <= candidate; d++) {
      if (candidate % d === 0) {
        prime = false;
        break;
      }
    }
    if (prime && ++found === n) return candidate;
  }
}

/**
 * The book's other motivation for a promise: getting a result back. Two
 * computations are spawned, their promises awaited, and the results summed.
 * (On this scheduler they run one after the other on the same thread: the
 * point is the shape of the program, not speed.)
 *
 * @example
 * ```ts
 * primes(100, 1000);   // 541 + 7919
 * ```
 */
export function primes(a: number, b: number): number {
  return run(function* () {
    const pa = yield* spawn(function* () {
      return nthPrime(a);
    });
    const pb = yield* spawn(function* () {
      return nthPrime(b);
    });
    console.log(`spawned: the ${a}th and the ${b}th primes`);
    return (yield* awaitPromise(pa)) + (yield* awaitPromise(pb));
  });
}
