/**
 * `run`: start a kernel on this thread (dom0) with a root task.
 */
import { availableParallelism } from "node:os";
import { unwatchForDeadlock, watchForDeadlock } from "./deadlock/drain.js";
import { describe } from "./describe.js";
import { dumpSignalOf, listenForDumps } from "./diagnostics/dump-signal.js";
import { Tracing } from "./diagnostics/tracing.js";
import { eventsLocation } from "./domains/define-events.js";
import { ignoredRun, isWorkerDomainThread } from "./domains/loading.js";
import type { Events } from "./events.js";
import type { RunConfig } from "./kernel/config.js";
import { runningTask } from "./kernel/current.js";
import { Kernel, type KernelOptions } from "./kernel/kernel.js";
import { SplitMix32 } from "./kernel/random.js";
import { MAX_FLIGHT_EVENTS } from "./kernel/recorder.js";
import { exitHooks } from "./lifecycle.js";
import type { TaskBody } from "./operation.js";
import { checkOptionNames } from "./option-names.js";
import type { KernelRunOptions } from "./run-kernel.js";
import { isGeneratorFunction, startFiber } from "./spawn.js";
import { EventsDriver } from "./syscall.js";

/** The most worker domains a run may ask for. */
const MAX_DOMAINS = 1024;

/**
 * Options of {@link run}.
 *
 * @example
 * ```ts
 * await B.run(main, { domains: 2, seed: 42, cancelGraceMs: 1000 });
 * ```
 */
export interface RunOptions {
  /** How many worker domains `call`/`parallel` may use (dom0 excluded), 0 to 1024. Default `availableParallelism() - 1`. */
  readonly domains?: number | undefined;
  /**
   * Whether idle worker domains take queued parallel work from busy ones
   * (ParaSail-style work sharing; see the package README). Default true.
   */
  readonly workSharing?: boolean | undefined;
  /**
   * Simulate the `domains` worker domains on this thread: `call`/`parallel`
   * run their task here, as the caller's child, with arguments and results
   * cloned as between threads and the domain chosen from the run's random
   * source, so that a run replays from its seed (no parallelism, no work
   * sharing; see the package README). Default false.
   */
  readonly simulateDomains?: boolean | undefined;
  /** Seeds every random choice of the run (`awaitOne`/`awaitFirst`/`get` ties, `call` placement). */
  readonly seed?: number | undefined;
  /**
   * Keeps each task's spawn time, in every domain, so that dumps show ages
   * (`B.dump()`): a map entry per task, kept while the task lives. Default:
   * on when a dump signal is set, otherwise off (ages are then known for the
   * root, and for tasks spawned while diagnostics channels are subscribed).
   */
  readonly taskAges?: boolean | undefined;
  /**
   * Keeps, in every domain, where each task was spawned and where it last
   * suspended: an error a task takes from a child (`awaitExn`, `awaitAll`, a
   * group, a `call`) then gets a line per task it crossed
   * (`at task handler#4 (spawned at server.ts:42), awaited at server.ts:57`),
   * and dumps show where each waiting task waits. It captures a stack at
   * every spawn and every park (see the bench's `traces` rows for the cost).
   * Default: the environment's `BOBBIN_TRACES` (`1` on, `0` off) if set,
   * otherwise on when `NODE_ENV` is `development`, off elsewhere.
   */
  readonly traces?: boolean | undefined;
  /**
   * Prints the task tree (`B.formatDump(await B.dump())`) on stderr each time
   * this signal arrives, while the run lasts: `{ dumpSignal: "SIGUSR2" }`, then
   * `kill -USR2 <pid>`. Default: the environment's `BOBBIN_DUMP_SIGNAL`, if set.
   */
  readonly dumpSignal?: NodeJS.Signals | undefined;
  /**
   * Reports a task whose step — from a resumption to its next wait, yield or
   * end — runs longer than this many ms, keeping every other task of its
   * domain waiting: a process warning (`BOBBIN_BLOCKING`, once per task)
   * and a message on `B.channels.task.blocked` (each time), naming the
   * task, its domain and where the step began. The report comes when the
   * step ends. Costs two clock reads per step. Default: none is reported.
   */
  readonly blockingMs?: number | undefined;
  /**
   * Keeps the last this many kernel events of each domain (spawn, start,
   * each step, park with what it waits on, wake with who woke it, cancel,
   * end, I/O readiness) in a ring, shown by `B.dump()` (its `flight`) and
   * `formatDump`, in `Deadlock` and `InternalError` reports, and drawn by
   * `B.chromeTrace`. Costs a few stores per event, and a clock read at the
   * end of each slice of the loop and at each wake from a Node callback.
   * Default: none kept.
   */
  readonly flightRecorder?: number | undefined;
  /** Steps between non-blocking polls of the events backend while syscalls are pending (Miou's quanta). Default 64. */
  readonly pollEvery?: number | undefined;
  /** Longest time, in ms, the scheduler runs before giving Node's event loop a turn. Default 10. */
  readonly sliceMs?: number | undefined;
  /**
   * How long, in ms, a worker domain may take to end a cancelled parallel task
   * (or to stop at the end of the run) before it is terminated and the run
   * fails with `DomainUnresponsive`. Default 3000.
   */
  readonly cancelGraceMs?: number | undefined;
  /** Aborting it cancels the root task; `run` then rejects with the abort reason. */
  readonly signal?: AbortSignal | undefined;
}

/** @internal The names of `run`'s options (`runOptionNames` of `@bobbin/core/lowlevel` lists them for runtimes). */
export const OPTION_NAMES: readonly string[] = Object.freeze([
  "domains",
  "workSharing",
  "simulateDomains",
  "seed",
  "taskAges",
  "traces",
  "dumpSignal",
  "blockingMs",
  "flightRecorder",
  "pollEvery",
  "sliceMs",
  "cancelGraceMs",
  "signal",
]);

/** The seams of a run, which runtimes and backends set (`runKernel` of `@bobbin/core/lowlevel`). */
const SEAM_NAMES: readonly string[] = ["events", "random", "policy", "tracer"];
/** `runKernel`'s options: a program's and the seams. */
const KERNEL_OPTION_NAMES: readonly string[] = [...OPTION_NAMES, ...SEAM_NAMES];

/**
 * Runs `main` as the root task of a new kernel on this thread (dom0) and
 * settles with its value or error once it and its whole task tree have ended,
 * and every worker domain it started has stopped. It always settles: a bug
 * in code the kernel calls (a handler, a hook, a backend) fails it with
 * `CallbackFailed`, a bug in the kernel itself with `InternalError`.
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
 * when every task waits and nothing can wake them; `CallbackFailed`,
 * `DomainUnresponsive`, `InternalError`; the signal's reason.
 * @throws TypeError / RangeError for an invalid `main` or options (synchronously).
 */
export function run<T>(main: TaskBody<[], T>, options: RunOptions = {}): Promise<T> {
  return startRun("run", main, options, false);
}

/**
 * @internal `run`, and `runKernel` (`seams` true), which takes the kernel's
 * seams besides; `name` is the caller's, for messages.
 */
export function startRun<T>(name: string, main: TaskBody<[], T>, options: KernelRunOptions, seams: boolean): Promise<T> {
  if (typeof main !== "function")
    throw new TypeError(`${name}(main) expects a generator function (function* () { … }), got ${describe(main)}`);
  if (runningTask() === null && isWorkerDomainThread()) return ignoredInWorkerDomain();
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`${name}(main, options) expects an options object, got ${describe(options)}`);
  }
  if (!seams) {
    const seam = SEAM_NAMES.find((key) => Object.hasOwn(options, key));
    if (seam !== undefined) {
      throw new TypeError(
        `run({ ${seam} }): ${SEAM_NAMES.join(", ")} are the seams of runtimes and backends, not a program's options: ` +
          "pass them to runKernel of @bobbin/core/lowlevel (a program on @bobbin/unix passes { backend } to its run)",
      );
    }
  }
  checkOptionNames(`${name}(main, options)`, options, seams ? KERNEL_OPTION_NAMES : OPTION_NAMES);
  const pollEvery = checkCount(options.pollEvery, 64, "pollEvery", 1, 1 << 20);
  const sliceMs = checkCount(options.sliceMs, 10, "sliceMs", 1, 60_000);
  const workers = checkCount(options.domains, Math.max(0, availableParallelism() - 1), "domains", 0, MAX_DOMAINS);
  const cancelGraceMs = checkCount(options.cancelGraceMs, 3000, "cancelGraceMs", 1, 3_600_000);
  const blockingMs = checkCount(options.blockingMs, 0, "blockingMs", 1, 3_600_000);
  const flightRecorder = checkCount(options.flightRecorder, 0, "flightRecorder", 1, MAX_FLIGHT_EVENTS);
  if (options.seed !== undefined && !Number.isSafeInteger(options.seed)) {
    throw new RangeError(`run({ seed }) must be a safe integer, got ${describe(options.seed)}`);
  }
  if (options.random !== undefined) {
    if (options.seed !== undefined) throw new TypeError("runKernel({ seed, random }): give a seed or a random source, not both");
    if (options.random === null || typeof options.random.below !== "function") {
      throw new TypeError(`runKernel({ random }) expects { below(bound): number }, got ${describe(options.random)}`);
    }
  }
  if (options.workSharing !== undefined && typeof options.workSharing !== "boolean") {
    throw new TypeError(`run({ workSharing }) expects true or false, got ${describe(options.workSharing)}`);
  }
  if (options.simulateDomains !== undefined && typeof options.simulateDomains !== "boolean") {
    throw new TypeError(`run({ simulateDomains }) expects true or false, got ${describe(options.simulateDomains)}`);
  }
  if (options.events !== undefined && typeof options.events !== "function") {
    throw new TypeError(`runKernel({ events }) expects a function (domain) => Events, got ${describe(options.events)}`);
  }
  if (options.policy !== undefined && (options.policy === null || typeof options.policy.pick !== "function")) {
    throw new TypeError(`runKernel({ policy }) expects { pick(ready): number }, got ${describe(options.policy)}`);
  }
  if (options.tracer !== undefined && (options.tracer === null || typeof options.tracer !== "object")) {
    throw new TypeError(`runKernel({ tracer }) expects an object of trace functions, got ${describe(options.tracer)}`);
  }
  if (options.taskAges !== undefined && typeof options.taskAges !== "boolean") {
    throw new TypeError(`run({ taskAges }) expects true or false, got ${describe(options.taskAges)}`);
  }
  if (options.traces !== undefined && typeof options.traces !== "boolean") {
    throw new TypeError(`run({ traces }) expects true or false, got ${describe(options.traces)}`);
  }
  const dumpSignal = dumpSignalOf(options.dumpSignal);
  const taskAges = options.taskAges ?? dumpSignal !== null;
  const signal = options.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new TypeError(`run({ signal }) expects an AbortSignal, got ${describe(signal)}`);
  const events = options.events?.(0) ?? null;
  if (events !== null && (typeof events?.select !== "function" || typeof events.interrupt !== "function")) {
    throw new TypeError("runKernel({ events }): the events backend must have select(block, cancelled) and interrupt()");
  }
  const seed = options.seed ?? (Math.random() * 2 ** 31) | 0;
  let onAbort: (() => void) | null = null;
  const config: RunConfig = {
    seed,
    workers,
    pollEvery,
    sliceMs,
    eventsLocation: eventsLocation(options.events),
    workSharing: options.workSharing ?? true,
    cancelGraceMs,
    taskAges,
    blockingMs,
    flightRecorder,
    simulateDomains: options.simulateDomains ?? false,
    traces: options.traces ?? tracesByDefault(),
  };
  const settled = startKernel(
    main,
    {
      config,
      domain: 0,
      events,
      random: options.random ?? new SplitMix32(seed),
      policy: options.policy ?? null,
      tracing: new Tracing(options.tracer ?? null, taskAges, 0, flightRecorder),
    },
    (kernel) => {
      if (signal === undefined) return;
      onAbort = () => kernel.life.fail(signal.reason);
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    },
  );
  const stopDumps = dumpSignal === null ? null : listenForDumps(dumpSignal);
  if (signal === undefined && stopDumps === null) return settled;
  return settled.finally(() => {
    if (signal !== undefined) signal.removeEventListener("abort", onAbort!);
    stopDumps?.();
  });
}

/**
 * A worker domain imports the module of each parallel task it runs; when that
 * module is the program's entry, its top-level `run` must not start a run of
 * its own (whose `call`s would start workers, which import the entry, and so
 * on). It does nothing there, and its Promise never settles, so the code after
 * an awaited `run` does not run in the worker either.
 */
function ignoredInWorkerDomain<T>(): Promise<T> {
  ignoredRun();
  return new Promise<T>(() => undefined);
}

/** @internal How a domain's kernel starts (`run` for dom0, the worker entry for the others); the rest is the same everywhere. */
export type StartOptions = Omit<KernelOptions, "drive" | "deadlocks" | "exitHooks">;

/** What every kernel is handed by the layers above it. */
const drive = (kernel: Kernel, events: Events): EventsDriver => new EventsDriver(kernel, events);

/**
 * @internal Starts a kernel with `main` as its root task; settles once the
 * root ended and the other domains (if any) stopped. `onCreate` runs once the
 * kernel exists, before the root task's first step.
 */
export function startKernel<T>(main: TaskBody<[], T>, options: StartOptions, onCreate?: (kernel: Kernel) => void): Promise<T> {
  const gen = isGeneratorFunction(main) ? main : startFiber(main, [], "run");
  const kernel = new Kernel({ ...options, drive, exitHooks });
  return new Promise<T>((resolve, reject) => {
    onCreate?.(kernel);
    // Watched for deadlocks from its start until it settles: a run whose tasks nothing can wake fails.
    watchForDeadlock(kernel);
    kernel.life.start(gen as never, (ok, value) => {
      unwatchForDeadlock(kernel);
      if (ok) resolve(value as T);
      else reject(value);
    });
  });
}

/**
 * Whether a run keeps traces when not told: as `BOBBIN_TRACES` says, or in
 * development only (a capture at each spawn and park costs many times the
 * spawn itself, which a test suite's run time would feel too).
 * @throws RangeError when `BOBBIN_TRACES` is neither `1` nor `0`.
 */
function tracesByDefault(): boolean {
  const env = process.env.BOBBIN_TRACES;
  if (env === undefined || env === "") return process.env.NODE_ENV === "development";
  if (env !== "1" && env !== "0") throw new RangeError(`BOBBIN_TRACES must be 1 (keep traces) or 0 (keep none), got ${describe(env)}`);
  return env === "1";
}

function checkCount(value: unknown, fallback: number, name: string, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`run({ ${name} }) must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}
