/**
 * When each task's cancellation is requested, according to the model: when
 * its parent cancels it (a cancel, a take then cancel, an awaitFirst it lost),
 * when its parent's body ends, or — for the root — when the run fails.
 */
import type { TaskRun } from "./replay.js";
import { INF, type TaskModel } from "./steps.js";

export interface CancellationTimes {
  /** When a cancellation was requested for the task: the event whose step requested it, or INF. */
  j(path: string): number;
  /** When its parent cancelled it, or INF. */
  cancelledAt(path: string): number;
}

export function parentOf(path: string): string | null {
  const i = path.lastIndexOf(".");
  return i < 0 ? null : path.slice(0, i);
}

/** The cancellation times of a run that fails at event `fatalIdx` (INF: it does not). */
export function cancellationTimes(
  runs: ReadonlyMap<string, TaskRun>,
  models: ReadonlyMap<string, TaskModel>,
  fatalIdx: number,
): CancellationTimes {
  const memo = new Map<string, number>();
  const cancelledAt = (path: string): number => {
    const parent = parentOf(path);
    if (parent === null) return INF;
    let at = INF;
    for (const point of models.get(parent)!.cancels.get(path) ?? []) {
      // An awaitFirst cancels its losers only if its task still waits when the first one ends.
      if (point.unlessParentBy === undefined || j(parent) > point.unlessParentBy) at = Math.min(at, point.at);
    }
    return at;
  };
  const j = (path: string): number => {
    let t = memo.get(path);
    if (t === undefined) {
      const parent = parentOf(path);
      t = parent === null ? fatalIdx : Math.min(cancelledAt(path), runs.get(parent)!.bodyEnd?.idx ?? INF);
      memo.set(path, t);
    }
    return t;
  };
  return { j, cancelledAt };
}
