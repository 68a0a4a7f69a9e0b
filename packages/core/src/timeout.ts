/**
 * `timeout`: a select case that happens after a delay, on a Node timer.
 *
 * Core has no timers of its own; this one is a plain `setTimeout`, armed when
 * a select starts waiting on the case and cleared when the case is withdrawn
 * (another case won, or the task was cancelled), so no timer outlives its
 * select. It is not unref'd: while a task waits on it, it keeps Node's loop
 * alive, as a sleeping task must — an unref'd timer would let Node drain its
 * loop and the run fail with `Deadlock` before the timeout fires.
 */
import { describe } from "./describe.js";
import { formatAge } from "./diagnostics/format.js";
import { type Choice, SelectCase } from "./select.js";

/** The longest delay Node's timers take (about 24.8 days); longer ones fire at once. */
const MAX_DELAY_MS = 2 ** 31 - 1;

type Timer = ReturnType<typeof setTimeout>;

/** A waiting timeout: its Node timer, and when it fires (`performance.now()`), for dumps. */
interface Armed {
  readonly timer: Timer;
  readonly at: number;
}

class Timeout extends SelectCase<undefined, Armed> {
  constructor(private readonly ms: number) {
    super();
  }

  offer(choice: Choice, index: number): void {
    if (this.ms === 0) choice.claim(index, undefined);
  }

  enlist(choice: Choice, index: number): Armed {
    return { timer: setTimeout(expire, this.ms, choice, index), at: performance.now() + this.ms };
  }

  withdraw(armed: Armed): void {
    clearTimeout(armed.timer);
  }

  /** "timeout, 2.4 s left". */
  override describe(armed: Armed | undefined): string {
    return armed === undefined ? `timeout of ${this.ms} ms` : `timeout, ${formatAge(Math.max(0, armed.at - performance.now()))} left`;
  }
}

function expire(choice: Choice, index: number): void {
  choice.claim(index, undefined);
}

/**
 * A select case that happens `ms` milliseconds after the select starts
 * waiting, with no value; on its own, `yield* B.timeout(ms)` sleeps. Its
 * timer is cleared when another case wins or the task is cancelled.
 * `timeout(0)` happens at once, so as the last case of a select it makes the
 * select return without waiting when no other case is ready.
 *
 * @example
 * ```ts
 * const r = yield* B.select([replies.recv(), B.timeout(500)]);
 * if (r.index === 1) throw new Error("no reply within 500 ms");
 * ```
 * @throws RangeError when `ms` is not a number from 0 to 2147483647.
 */
export function timeout(ms: number): SelectCase<undefined> {
  if (typeof ms !== "number" || !(ms >= 0 && ms <= MAX_DELAY_MS)) {
    throw new RangeError(`timeout(ms) expects a delay from 0 to ${MAX_DELAY_MS} ms (Node's timers), got ${describe(ms)}`);
  }
  return new Timeout(ms);
}
