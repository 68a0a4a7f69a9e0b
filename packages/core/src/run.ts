/**
 * `run`: start a scheduler on this thread with a root task.
 */
import { availableParallelism } from "node:os";
import { eventsLocation } from "./define-task.js";
import type { Events } from "./events.js";
import type { Instruction, TaskBody } from "./operation.js";
import { Scheduler, type SchedulerOptions } from "./scheduler.js";
import { startFiber } from "./spawn.js";

/** Options of {@link run}. */
export interface RunOptions {
  /**
   * The events backend of each domain, made once per domain. Define it with
   * `defineEvents` so that worker domains can make theirs too.
   */
  readonly events?: (domain: number) => Events;
  /** How many worker domains `call`/`parallel` may use (dom0 excluded). Default `availableParallelism() - 1`. */
  readonly domains?: number;
  /**
   * Whether idle worker domains take queued parallel work from busy ones
   * (ParaSail-style work sharing; see the package README). Default true.
   */
  readonly workSharing?: boolean;
  /** Seeds every random choice of the run (`awaitOne`/`awaitFirst` ties, `call` placement). */
  readonly seed?: number;
  /** Steps between non-blocking polls of the events backend while syscalls are pending (Miou's quanta). Default 64. */
  readonly pollEvery?: number;
  /** Longest time, in ms, the scheduler runs before giving Node's event loop a turn. Default 10. */
  readonly sliceMs?: number;
  /** Aborting it cancels the root task; `run` then rejects with the abort reason. */
  readonly signal?: AbortSignal;
}

/**
 * Runs `main` as the root task of a new scheduler on this thread (dom0) and
 * settles with its value or error once it and its whole task tree have ended,
 * and every worker domain it started has stopped.
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
  const pollEvery = checkCount(options.pollEvery, 64, "pollEvery", 1);
  const sliceMs = checkCount(options.sliceMs, 10, "sliceMs", 1);
  const workers = checkCount(options.domains, Math.max(0, availableParallelism() - 1), "domains", 0);
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
  let onAbort: (() => void) | null = null;
  const settled = startDomain(main, {
    domain: 0,
    workers,
    seed: options.seed ?? (Math.random() * 2 ** 31) | 0,
    pollEvery,
    sliceMs,
    events,
    eventsLocation: eventsLocation(options.events),
    workSharing: options.workSharing ?? true,
    onStart(sched) {
      if (signal === undefined) return;
      onAbort = () => {
        sched.fail(signal.reason);
        sched.wake();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    },
  });
  return signal === undefined ? settled : settled.finally(() => signal.removeEventListener("abort", onAbort!));
}

/** @internal How a domain's scheduler starts: `run` for dom0, the worker entry for the others. */
export interface DomainStart extends SchedulerOptions {
  /** Called once the scheduler exists, before the root task runs. */
  readonly onStart?: (sched: Scheduler) => void;
}

/** @internal Runs a domain's root task; settles once it ended and, on dom0, the workers stopped. */
export function startDomain<T>(main: TaskBody<[], T>, start: DomainStart): Promise<T> {
  const gen = startFiber(main, [], "run") as Generator<Instruction, unknown, unknown>;
  const sched = new Scheduler(start);
  return new Promise<T>((resolve, reject) => {
    start.onStart?.(sched);
    sched.start(gen, (ok, value) => {
      const settle = (): void => (ok ? resolve(value as T) : reject(value));
      if (sched.pool === null) settle();
      else sched.pool.shutdown().then(settle, settle);
    });
  });
}

function checkCount(value: number | undefined, fallback: number, name: string, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) throw new RangeError(`run({ ${name} }) must be an integer ≥ ${min}, got ${value}`);
  return value;
}
