/**
 * Trace points: the kernel reports each task's life to a {@link Tracer} when
 * one is installed, and costs one null check per point when none is.
 */
import type { Task } from "./task.js";

/**
 * Hears the life of every task of a domain, synchronously, in the order
 * things happen: `run(main, { tracer })`. Every method is optional. A tracer
 * that throws fails the run (naming the tracer), like any code the kernel
 * calls but does not own.
 *
 * - `spawn`: a task was made (queued, not started); `parent` is its parent.
 * - `start`: its body is about to run for the first time.
 * - `suspend`: it parked (it waits on something).
 * - `resume`: it was woken and is queued to run again.
 * - `cancel`: its cancellation was requested.
 * - `end`: it and its subtree have ended (`task.status` says how).
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * await B.run(main, { tracer: { spawn: (t, p) => lines.push(`${p} spawned ${t}`), end: (t) => lines.push(`${t} ${t.status}`) } });
 * ```
 */
export interface Tracer {
  spawn?(task: Task, parent: Task): void;
  start?(task: Task): void;
  suspend?(task: Task): void;
  resume?(task: Task): void;
  cancel?(task: Task): void;
  end?(task: Task): void;
}

/** @internal The trace points, by name. */
export type TracePoint = keyof Tracer;

/**
 * @internal Says which tracer a kernel reports to: asked when the kernel
 * starts and at the start of each slice of its loop, never per step, so that
 * listeners that come and go (diagnostics channels) cost nothing while none
 * listens (see diagnostics/tracing.ts).
 */
export interface TraceSource {
  current(): Tracer | null;
}
