/**
 * The options of a program's `run`, and their names: apart from the run's
 * start (run-kernel.ts) so that `run` and the start both read them, and a
 * program's declarations reach no seam of the kernel.
 */

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
