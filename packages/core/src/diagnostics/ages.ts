/**
 * Task ages, for dumps. A task record has no field for its spawn time (six
 * fields, kept small on purpose), so spawn times are kept aside, in a
 * WeakMap, by a tracer — only while one is wanted: when the run asked for
 * ages (`taskAges`, or a dump signal), or while diagnostics channels are
 * subscribed. That costs a map entry per task spawned meanwhile; a run that
 * never asks pays nothing, and its dumps show no ages (the root's is always
 * known: the kernel keeps when the run started).
 */
import type { Kernel } from "../kernel/kernel.js";
import type { Task } from "../kernel/task.js";
import type { Tracer } from "../kernel/trace.js";

const spawnedAt = new WeakMap<Task, number>();

/** @internal The tracer that records spawn times (a system task's at its first step). */
export const ageRecorder: Tracer = {
  spawn(task: Task): void {
    spawnedAt.set(task, performance.now());
  },
  start(task: Task): void {
    if (task.parent === null && !spawnedAt.has(task)) spawnedAt.set(task, performance.now());
  },
};

/** @internal How long ago `task` was spawned, in ms, or null when nobody recorded it. */
export function ageOf(task: Task, kernel: Kernel): number | null {
  const at = spawnedAt.get(task) ?? (kernel.life.topTasks()[0] === task ? kernel.startedAt : undefined);
  return at === undefined ? null : performance.now() - at;
}
