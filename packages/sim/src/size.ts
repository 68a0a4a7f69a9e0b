/**
 * How big a failing run is, as the shrinker sees it: how many preemptions
 * its schedule made, how many faults it suffered (and when), how many steps
 * it took — counted up to its failure.
 */
import type * as B from "@bobbin/core";
import type { ChoiceLog, StepListener } from "./choices.js";
import type { Host } from "./host.js";

/**
 * The size of a failing run, up to its failure.
 *
 * - `preemptions`: steps where the schedule ran a task of a host while
 *   another task of the same host had been ready longer (choosing which
 *   host goes next is free: hosts run side by side);
 * - `faults`: partitions, holds, resets and crashes, datagrams lost or
 *   reordered by a link, files torn or emptied by a crash;
 * - `steps`: every step of every task.
 *
 * @example
 * ```ts
 * const { preemptions, faults, steps } = failure.size;
 * ```
 */
export interface RunSize {
  readonly preemptions: number;
  readonly faults: number;
  readonly steps: number;
}

/**
 * @internal Whether running `ready[i]` is a preemption: a task of its host
 * was ready before it (`ready` is oldest first).
 */
export function preempts(ready: readonly B.Task<unknown>[], i: number, hostOf: (task: B.Task<unknown>) => Host | null): boolean {
  const host = hostOf(ready[i]!);
  for (let j = 0; j < i; j++) if (hostOf(ready[j]!) === host) return true;
  return false;
}

/** @internal Counts a run's size as it goes, and keeps it at its first failure. */
export class Measure implements StepListener {
  private steps = 0;
  private preemptions = 0;
  /** When each fault happened (virtual ms). */
  private readonly faultTimes: number[] = [];
  /** The size and the fault times at the first failure, and how many choices had been made by then. */
  failed: { readonly size: RunSize; readonly faultTimes: readonly number[]; readonly schedule: number; readonly data: number } | null =
    null;

  constructor(private readonly hostOf: (task: B.Task<unknown>) => Host | null) {}

  step(ready: readonly B.Task<unknown>[], chosen: number): void {
    this.steps++;
    if (chosen !== 0 && preempts(ready, chosen, this.hostOf)) this.preemptions++;
  }

  fault(now: number): void {
    this.faultTimes.push(now);
  }

  /** The size so far. */
  now(): RunSize {
    return { preemptions: this.preemptions, faults: this.faultTimes.length, steps: this.steps };
  }

  /** The run failed: its size is what it is now. */
  fail(log: ChoiceLog | null): void {
    if (this.failed !== null) return;
    this.failed = {
      size: this.now(),
      faultTimes: this.faultTimes.slice(),
      schedule: log?.schedule.length ?? 0,
      data: log?.data.length ?? 0,
    };
  }
}
