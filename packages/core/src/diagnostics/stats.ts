/**
 * `stats`: how loaded each domain of this thread is, now — cheap enough to
 * read on every collection of a metrics exporter (no task is visited).
 */
import { runs } from "./runs.js";

/**
 * One domain's load, as {@link stats} reads it.
 *
 * @example
 * ```ts
 * const busy = B.stats().filter((s: B.DomainStats) => s.ready > 100);
 * ```
 */
export interface DomainStats {
  /** The domain (0: the main thread). */
  readonly domain: number;
  /** Its tasks that have not ended. */
  readonly tasks: number;
  /** Its tasks ready to run, waiting for their turn (the ready queue's length). */
  readonly ready: number;
}

/**
 * The load of every run in progress on this thread: for each, its domain,
 * how many tasks it has and how many of them are ready to run. A worker
 * domain's thread sees its own domain (read it there, as metrics exporters
 * in worker threads do). Domains simulated on this thread (`run`'s
 * `simulateDomains`) count as the one that runs them.
 *
 * @example
 * ```ts
 * setInterval(() => console.log(B.stats()), 1000).unref();   // [{ domain: 0, tasks: 12, ready: 3 }]
 * ```
 * @throws never.
 */
export function stats(): DomainStats[] {
  return [...runs].map((kernel) => ({ domain: kernel.domain, tasks: kernel.liveTasks, ready: kernel.ready.length }));
}
