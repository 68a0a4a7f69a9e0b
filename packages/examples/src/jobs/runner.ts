/**
 * A job runner: each job is a child process (`spawnProcess`), run by a task
 * of its own that owns it; at most `limit` run at once (`B.map` with a
 * concurrency). Cancelling the runner (Ctrl-C under `main`) cancels the
 * jobs' tasks, and with each its process: SIGTERM, SIGKILL after the grace,
 * reaped before the run settles.
 */
import * as B from "@bobbin/core";
import { close, type ProcessExit, spawnProcess } from "@bobbin/unix";
import { eachLine } from "../child/lines.js";

/** A command to run. */
export interface Job {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
}

/** What happened to a job, as the runner reports it. */
export type JobEvent =
  | { readonly kind: "started"; readonly job: Job; readonly pid: number }
  | { readonly kind: "line"; readonly job: Job; readonly line: string }
  | { readonly kind: "ended"; readonly job: Job; readonly exit: ProcessExit; readonly seconds: number };

/** How a job ended. */
export interface JobResult {
  readonly job: Job;
  readonly pid: number;
  readonly exit: ProcessExit;
}

/** Options of {@link runJobs}. */
export interface RunJobsOptions {
  /** How many jobs run at once (an integer ≥ 1). */
  readonly limit: number;
  /** Seconds a cancelled job's process has between SIGTERM and SIGKILL (default 2). */
  readonly grace?: number;
  /** Hears each job start, print a line of its stdout, and end. */
  readonly onEvent?: (event: JobEvent) => void;
}

/**
 * Runs one job to its end: starts its process, reports each line of its
 * stdout, waits for its exit. Cancelled, its process is killed (it is this
 * task's).
 *
 * @example
 * ```ts
 * const { exit } = yield* runJob({ name: "ls", command: "ls", args: [] }, { limit: 1 });
 * ```
 * @throws the error of starting the command (`ENOENT`…).
 */
export function* runJob(job: Job, options: RunJobsOptions): Generator<B.Instruction, JobResult, unknown> {
  const onEvent = options.onEvent ?? (() => {});
  const started = performance.now();
  const child = yield* spawnProcess(job.command, job.args, { stdin: "ignore", stderr: "inherit", grace: options.grace ?? 2 });
  onEvent({ kind: "started", job, pid: child.pid });
  try {
    yield* eachLine(child.stdout!, (line) => onEvent({ kind: "line", job, line }));
  } finally {
    yield* close(child.stdout!);
  }
  const exit = yield* child.wait();
  onEvent({ kind: "ended", job, exit, seconds: (performance.now() - started) / 1000 });
  return { job, pid: child.pid, exit };
}

/**
 * Runs `jobs`, at most `limit` at once, in the order given; returns how each
 * ended, in that order. A job that exits with an error code is a result,
 * not a failure; one that cannot start fails the runner (the others are
 * cancelled, their processes killed).
 *
 * @example
 * ```ts
 * const results = yield* runJobs(jobs, { limit: 2, onEvent: (e) => console.log(e.kind, e.job.name) });
 * ```
 * @throws RangeError when `limit` is not an integer ≥ 1; the first job's error that could not start.
 */
export function runJobs(jobs: readonly Job[], options: RunJobsOptions): B.Operation<JobResult[]> {
  if (!Number.isInteger(options.limit) || options.limit < 1)
    throw new RangeError(`runJobs({ limit }): an integer ≥ 1, got ${options.limit}`);
  return B.map(jobs, (job: Job) => runJob(job, options), { concurrency: options.limit });
}
