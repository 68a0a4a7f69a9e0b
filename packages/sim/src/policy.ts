/**
 * Schedules: which ready task runs next, at each step where more than one
 * could (core's `SchedulingPolicy`).
 *
 * - `"fifo"`: the task that has waited longest (the runtime's own order).
 * - `"random"`: any ready task, uniformly, drawn from the world's generator.
 * - `"pct"`: probabilistic concurrency testing (Burckhardt et al., ASPLOS
 *   2010). Each task gets a random priority when it is first seen; the
 *   highest-priority ready task runs; at `depth − 1` steps chosen at random
 *   among the first `steps`, the task about to run drops below every initial
 *   priority. A bug that needs `d` ordering constraints to show is found with
 *   probability at least 1 / (n · k^(d−1)) per run (n tasks, k steps) when
 *   `depth ≥ d` — far better than uniform random choices for shallow bugs in
 *   long runs.
 */
import type * as B from "@bobbin/core";
import type * as L from "@bobbin/core/lowlevel";
import type { WorldRandom } from "./random.js";

/**
 * The name of a schedule: `"fifo"`, `"random"` or `"pct"`.
 *
 * @example
 * ```ts
 * const sim = new Sim({ seed: 42, policy: "pct", depth: 2 });
 * ```
 */
export type PolicyName = "fifo" | "random" | "pct";

/** @internal The names, for checks and messages. */
export const POLICY_NAMES: readonly PolicyName[] = ["fifo", "random", "pct"];

/** @internal Every task's choices go through the world's generator. */
export function makePolicy(name: PolicyName, random: WorldRandom, depth: number, steps: number): L.SchedulingPolicy | undefined {
  switch (name) {
    case "fifo":
      return undefined; // the kernel's own queue: the same order, at no cost
    case "random":
      return { pick: (ready) => random.below(ready.length) };
    case "pct":
      return new Pct(random, depth, steps);
  }
}

/** @internal PCT (see the file comment). */
export class Pct implements L.SchedulingPolicy {
  /** Each task's priority: initial ones are ≥ `depth`; a task lowered at the i-th change point (from 0) gets `i`. */
  private readonly priorities = new WeakMap<B.Task<unknown>, number>();
  /** The steps (1-based) at which the running task is lowered, in order. */
  private readonly changes: number[];
  private step = 0;
  private lowered = 0;
  /** The most steps a run of this policy took, so that `check` can fit the next runs' change points. */
  maxStep = 0;

  constructor(
    private readonly random: WorldRandom,
    private readonly depth: number,
    steps: number,
  ) {
    const changes = new Set<number>();
    const count = Math.min(depth - 1, steps);
    while (changes.size < count) changes.add(1 + random.below(steps));
    this.changes = [...changes].sort((a, b) => a - b);
  }

  pick(ready: readonly B.Task<unknown>[]): number {
    const step = ++this.step;
    this.maxStep = step;
    let best = this.highest(ready);
    if (this.lowered < this.changes.length && this.changes[this.lowered] === step) {
      this.priorities.set(ready[best]!, this.lowered);
      this.lowered++;
      best = this.highest(ready);
    }
    return best;
  }

  private highest(ready: readonly B.Task<unknown>[]): number {
    let best = 0;
    let top = -1;
    for (let i = 0; i < ready.length; i++) {
      const p = this.priorityOf(ready[i]!);
      if (p > top) {
        top = p;
        best = i;
      }
    }
    return best;
  }

  /** A task first seen gets a random priority above every lowered one (a float: ties are as good as impossible, and broken by age). */
  private priorityOf(task: B.Task<unknown>): number {
    let p = this.priorities.get(task);
    if (p === undefined) {
      p = this.depth + this.random.float();
      this.priorities.set(task, p);
    }
    return p;
  }
}
