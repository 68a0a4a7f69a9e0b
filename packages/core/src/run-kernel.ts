/**
 * `runKernel`: `run` for runtimes and backends, which also hands the kernel
 * its seams. Apart from run.ts so that a program's declarations (`run` and
 * its options) never reach the seams' types.
 */
import type { Events } from "./events.js";
import type { SchedulingPolicy } from "./kernel/policy.js";
import type { RandomSource } from "./kernel/random.js";
import type { Tracer } from "./kernel/trace.js";
import type { TaskBody } from "./operation.js";
import { OPTION_NAMES, type RunOptions, startRun } from "./run.js";

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
 * key itself with `checkOptionNames`, in a message naming its own `run`
 * and options rather than `runKernel`'s.
 *
 * @example
 * ```ts
 * L.checkOptionNames("run(main, options)", options, ["backend", ...L.runOptionNames]);
 * ```
 * @throws never: a frozen array of strings.
 */
export const runOptionNames: readonly string[] = OPTION_NAMES;
