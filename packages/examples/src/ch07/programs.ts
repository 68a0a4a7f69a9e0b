/**
 * Chapter 7's programs, on the `Chat` sleepers.
 */
import * as B from "@bobbin/core";
import * as Chat from "./chat.js";
import { sleeper } from "./tasks.js";

function* raiseErrors(results: readonly B.Result<unknown>[]): Generator<never, void, unknown> {
  for (const r of results) if (!r.ok) throw r.error;
}

/**
 * The book's `program`: two tasks sleep `a` and `b` seconds (1 and 2 in the
 * book) at the same time; the whole takes about `max(a, b)` seconds, less
 * than `a + b`. Returns the elapsed time in seconds.
 *
 * @example
 * ```ts
 * const t = await twoSleeps(1, 2);   // ≈ 2, < 3
 * ```
 */
export async function twoSleeps(a = 1, b = 2): Promise<number> {
  const t0 = performance.now();
  await Chat.run(function* () {
    const pa = B.spawn(Chat.sleep, a);
    const pb = B.spawn(Chat.sleep, b);
    yield* raiseErrors(yield* B.awaitAll([pa, pb]));
  });
  return (performance.now() - t0) / 1000;
}

/**
 * "We can now safely replace our `Miou.call_cc` with `Miou.call`": the same
 * two sleeps as parallel tasks, each with its own domain's sleepers.
 * Returns the elapsed time in seconds.
 *
 * @example
 * ```ts
 * const t = await twoParallelSleeps(1, 2);   // ≈ 2 (plus starting the workers)
 * ```
 */
export async function twoParallelSleeps(a = 1, b = 2): Promise<number> {
  const t0 = performance.now();
  await Chat.run(
    function* () {
      const pa = B.call(sleeper, a);
      const pb = B.call(sleeper, b);
      yield* raiseErrors(yield* B.awaitAll([pa, pb]));
    },
    { domains: 2 },
  );
  return (performance.now() - t0) / 1000;
}

/** What {@link cancelLongSleep} observed. */
export interface CancelledSleep {
  /** From the start of the run to the end of `cancel`, in seconds. */
  readonly seconds: number;
  /** How long `cancel` itself took, in seconds. */
  readonly cancelSeconds: number;
  /** The parallel task's result: `Cancelled`. */
  readonly result: B.Result<void>;
  /** How many times the sleeping domain's `select` was interrupted. */
  readonly interrupts: number;
}

/**
 * The book's proof of `interrupt`: a parallel task sleeps `delay` seconds
 * (10 in the book) and is cancelled; `cancel` returns at once instead of
 * after `delay` seconds, because the sleeping domain's `select` is
 * interrupted. (The book cancels after one `Miou.yield ()`; starting a worker
 * thread takes longer than that, so this waits until the task is actually
 * asleep, and 50 ms more, to prove that a domain waiting in `select` is woken.)
 *
 * @example
 * ```ts
 * const { seconds, result } = await cancelLongSleep(10);   // seconds ≪ 10, result.ok === false
 * ```
 */
export async function cancelLongSleep(delay = 10): Promise<CancelledSleep> {
  const t0 = performance.now();
  const asleep = new Int32Array(new SharedArrayBuffer(8));
  return Chat.run(
    function* () {
      const prm = B.call(sleeper, delay, asleep);
      while (Atomics.load(asleep, 0) === 0) yield* Chat.sleep(0.005);
      yield* Chat.sleep(0.05); // the task suspended; now its domain is surely waiting in select
      const t1 = performance.now();
      yield* B.cancel(prm);
      const t2 = performance.now();
      const result = yield* B.awaitTask(prm);
      return { seconds: (t2 - t0) / 1000, cancelSeconds: (t2 - t1) / 1000, result, interrupts: Atomics.load(asleep, 1) };
    },
    { domains: 1 },
  );
}
