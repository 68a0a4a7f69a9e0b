/**
 * `run`: start a scheduler on this thread with a root task.
 */
import type { Events } from "./events.js";
import type { TaskBody } from "./operation.js";
import { Scheduler } from "./scheduler.js";
import { startFiber } from "./spawn.js";

/** Options of {@link run}. */
export interface RunOptions {
  /** The events backend of each domain, made once per domain (`domain` is 0 here). */
  readonly events?: (domain: number) => Events;
  /** Seeds every random choice of the run (`awaitOne`/`awaitFirst` ties, placement). */
  readonly seed?: number;
  /** Steps between non-blocking polls of the events backend while syscalls are pending (Miou's quanta). Default 64. */
  readonly pollEvery?: number;
  /** Longest time, in ms, the scheduler runs before giving Node's event loop a turn. Default 10. */
  readonly sliceMs?: number;
  /** Aborting it cancels the root task; `run` then rejects with the abort reason. */
  readonly signal?: AbortSignal;
}

/**
 * Runs `main` as the root task of a new scheduler on this thread and settles
 * with its value or error once it and its whole task tree have ended.
 *
 * @example
 * ```ts
 * const n = await B.run(function* () {
 *   const child = B.spawn(function* () { return 21 * 2; });
 *   return yield* B.awaitExn(child);
 * });   // 42
 * ```
 * @throws (rejects with) the root task's error; `StillHasChildren`,
 * `ResourceLeaked` when a rule is broken anywhere in the tree; `Deadlock`
 * when every task waits and nothing can wake them; the signal's reason.
 * @throws TypeError / RangeError for invalid options (synchronously).
 */
export function run<T>(main: TaskBody<[], T>, options: RunOptions = {}): Promise<T> {
  const pollEvery = checkCount(options.pollEvery, 64, "pollEvery");
  const sliceMs = checkCount(options.sliceMs, 10, "sliceMs");
  if (options.seed !== undefined && !Number.isInteger(options.seed)) {
    throw new RangeError(`run({ seed }) must be an integer, got ${options.seed}`);
  }
  if (options.events !== undefined && typeof options.events !== "function") {
    throw new TypeError("run({ events }) expects a function (domain) => Events");
  }
  const signal = options.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError("run({ signal }) expects an AbortSignal");
  const events = options.events?.(0) ?? null;
  if (events !== null && (typeof events.select !== "function" || typeof events.interrupt !== "function")) {
    throw new TypeError("run({ events }): the events backend must have select(block, cancelled) and interrupt()");
  }
  const sched = new Scheduler({
    domain: 0,
    seed: options.seed ?? (Math.random() * 2 ** 32) | 0,
    pollEvery,
    sliceMs,
    events,
  });
  const gen = startFiber(main, [], "run");
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => sched.cancelRun(signal!.reason);
    sched.start(gen, (ok, value) => {
      signal?.removeEventListener("abort", onAbort);
      if (ok) resolve(value as T);
      else reject(value);
    });
    if (signal !== undefined) {
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  });
}

function checkCount(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`run({ ${name} }) must be a positive integer, got ${value}`);
  return value;
}
