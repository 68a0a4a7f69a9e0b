/**
 * How a run starts: `runKernel`, `run` for runtimes and backends, which also
 * hands the kernel its seams, and the start both share — the options
 * checked, the kernel made, its end awaited (`startKernel`, which a worker
 * domain's entry uses too). A program's `run` (run.ts) and its options
 * (run-options.ts) stand apart so that its declarations never reach the
 * seams' types.
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
import type { SchedulingPolicy } from "./kernel/policy.js";
import { type RandomSource, SplitMix32 } from "./kernel/random.js";
import { MAX_FLIGHT_EVENTS } from "./kernel/recorder.js";
import type { Tracer } from "./kernel/trace.js";
import { exitHooks } from "./lifecycle.js";
import type { TaskBody } from "./operation.js";
import { unknownOption } from "./option-names.js";
import { OPTION_NAMES, type RunOptions } from "./run-options.js";
import { isGeneratorFunction, startFiber } from "./spawn.js";
import { EventsDriver } from "./syscall.js";

/**
 * Options of {@link runKernel}: a program's options (`B.RunOptions`) and the
 * kernel's seams, which runtimes, backends and the simulator set.
 *
 * @example
 * ```ts
 * const options: L.KernelRunOptions = { events: (domain) => myEvents(domain), seed: 7 };
 * await L.runKernel(main, options);
 * ```
 */
export interface KernelRunOptions extends RunOptions {
  /**
   * The events backend of each domain, made once per domain. Define it with
   * `defineEvents` so that worker domains can make theirs too.
   */
  readonly events?: ((domain: number) => Events) | undefined;
  /**
   * Where dom0 draws its random choices from, instead of a generator seeded
   * by `seed` (give one or the other). Worker domains use `seed`.
   */
  readonly random?: RandomSource | undefined;
  /** Chooses which ready task runs next (default: the one that has waited longest). */
  readonly policy?: SchedulingPolicy | undefined;
  /** Hears the life of every task of dom0 (spawn, start, suspend, resume, cancel, end). */
  readonly tracer?: Tracer | undefined;
}

/**
 * `B.run` with the kernel's seams: runs `main` as the root task of a new
 * kernel on this thread, with the events backend, scheduling policy, random
 * source and tracer given. It is how `@bobbin/unix`'s `run` starts its
 * backend and `@bobbin/sim` its world; a program calls `B.run` (or its
 * runtime's `run`).
 *
 * @example
 * ```ts
 * const events = L.defineEvents(import.meta.url, "events", (domain) => new MyBackend(domain));
 * await L.runKernel(main, { events, domains: 2 });
 * ```
 * @throws (rejects with) what `B.run` rejects with.
 * @throws TypeError / RangeError for an invalid `main` or options (synchronously).
 */
export function runKernel<T>(main: TaskBody<[], T>, options: KernelRunOptions = {}): Promise<T> {
  return startRun("runKernel", main, options, true);
}

/**
 * The names of `B.run`'s options, for a runtime whose own `run` takes them and
 * options of its own (`@bobbin/unix`'s takes `backend`): it refuses any other
 * key itself with {@link checkRunOptionNames}, in a message naming its own
 * `run` and options rather than `runKernel`'s.
 *
 * @example
 * ```ts
 * L.checkRunOptionNames("run(main, options)", options, ["backend", ...L.runOptionNames], (seam) => `run({ ${seam} }): not here`);
 * ```
 * @throws never: a frozen array of strings.
 */
export const runOptionNames: readonly string[] = OPTION_NAMES;

/**
 * The names of the kernel's seams: the options {@link runKernel} takes
 * besides `B.run`'s, which runtimes and backends set and a program's `run`
 * refuses. A runtime's own `run` that passes some of them on lists them
 * among the names it checks its options against (and makes `events` itself
 * when it owns the backend).
 *
 * @example
 * ```ts
 * const passedOn = L.kernelSeamNames.filter((seam) => seam !== "events");   // random, policy, tracer
 * const names = ["backend", ...L.runOptionNames, ...passedOn];
 * ```
 * @throws never: a frozen array of strings.
 */
export const kernelSeamNames: readonly string[] = Object.freeze(["events", "random", "policy", "tracer"]);

/**
 * Refuses an option a run does not take, in one pass over the names of
 * `options`: a seam of the kernel not among `names`, in the message
 * `refuseSeam` makes (where that seam goes instead); any other name not among
 * `names`, in `checkOptionNames`' message. A seam given as `undefined` is
 * taken as not given, as a configuration hands it on. `B.run` and
 * {@link runKernel} check their options with it; a runtime's own `run`
 * checks its users' options with it before it makes anything, in messages
 * naming its own entry, then hands `runKernel` the kernel's options only.
 *
 * @param what the run as its caller wrote it, e.g. `"run(main, options)"`.
 * @param options the options object the run was given (checked to be an object first).
 * @param names every option the run takes: `B.run`'s ({@link runOptionNames}),
 * the seams it takes ({@link kernelSeamNames}), its own, in the order its
 * message lists them.
 * @param refuseSeam the message for a seam the run does not take.
 *
 * @example
 * ```ts
 * const names = ["backend", ...L.runOptionNames];
 * L.checkRunOptionNames("run(main, options)", options, names, (seam) => `run(main, { ${seam} }): a seam of the kernel, not a program's option`);
 * const { backend, ...kernel } = options;
 * await L.runKernel(main, { ...kernel, events: (domain) => backend(domain) });
 * ```
 * @throws TypeError for the first key of `options` that the run does not take.
 */
export function checkRunOptionNames(what: string, options: object, names: readonly string[], refuseSeam: (seam: string) => string): void {
  for (const [key, value] of Object.entries(options)) {
    if (names.includes(key)) continue;
    if (!kernelSeamNames.includes(key)) throw unknownOption(what, key, names);
    if (value !== undefined) throw new TypeError(refuseSeam(key));
  }
}

/**
 * The values `run` takes for the options a program leaves out, where they
 * are fixed (`domains` depends on the machine, the others are off): for a
 * runtime that uses one of them itself — `@bobbin/unix`'s run bounds its
 * backend's drain by the run's `cancelGraceMs`, this one when none is given.
 *
 * @example
 * ```ts
 * const graceMs = options.cancelGraceMs ?? L.runDefaults.cancelGraceMs;   // 3000
 * ```
 * @throws never: a frozen object.
 */
export const runDefaults: RunDefaults = Object.freeze({ pollEvery: 64, sliceMs: 10, cancelGraceMs: 3000 });

/**
 * The most worker domains a run may ask for (`domains` is an integer from 0
 * to it): for a runtime that takes a number of domains itself and refuses,
 * when its user gives it, what `run` would refuse later (`@bobbin/sim`'s
 * `new Sim({ domains })`).
 *
 * @example
 * ```ts
 * if (!Number.isInteger(domains) || domains < 0 || domains > L.maxDomains) throw new RangeError(`…from 0 to ${L.maxDomains}…`);
 * ```
 * @throws never: a number.
 */
export const maxDomains = 1024;

/**
 * The type of {@link runDefaults}.
 *
 * @example
 * ```ts
 * const { sliceMs }: L.RunDefaults = L.runDefaults;
 * ```
 */
export interface RunDefaults {
  /** `pollEvery` when not given. */
  readonly pollEvery: number;
  /** `sliceMs` when not given. */
  readonly sliceMs: number;
  /** `cancelGraceMs` when not given. */
  readonly cancelGraceMs: number;
}

/** `runKernel`'s options: a program's and the seams. */
const KERNEL_OPTION_NAMES: readonly string[] = [...OPTION_NAMES, ...kernelSeamNames];

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
  checkRunOptionNames(`${name}(main, options)`, options, seams ? KERNEL_OPTION_NAMES : OPTION_NAMES, seamOfRuntimes);
  const pollEvery = checkCount(options.pollEvery, runDefaults.pollEvery, "pollEvery", 1, 1 << 20);
  const sliceMs = checkCount(options.sliceMs, runDefaults.sliceMs, "sliceMs", 1, 60_000);
  const workers = checkCount(options.domains, Math.max(0, availableParallelism() - 1), "domains", 0, maxDomains);
  const cancelGraceMs = checkCount(options.cancelGraceMs, runDefaults.cancelGraceMs, "cancelGraceMs", 1, 3_600_000);
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

/** Where a seam given to a program's `run` goes. */
function seamOfRuntimes(seam: string): string {
  return (
    `run({ ${seam} }): ${kernelSeamNames.join(", ")} are the seams of runtimes and backends, not a program's options: ` +
    "pass them to runKernel of @bobbin/core/lowlevel (a program on @bobbin/unix passes { backend } to its run)"
  );
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
