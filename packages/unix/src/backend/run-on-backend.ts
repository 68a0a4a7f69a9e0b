/**
 * `runOnBackend`: `run` for runtimes built on a backend (the simulator),
 * which also hands the kernel its seams. Apart from run.ts so that a
 * program's declarations never reach the seams' types.
 */
import type * as B from "@bobbin/core";
import type * as L from "@bobbin/core/lowlevel";
import { type RunOptions, startRun } from "../run.js";

/**
 * Options of {@link runOnBackend}: `run`'s options and the kernel's seams
 * (`L.KernelRunOptions`'s), but not `events`: the backend is the events backend.
 *
 * @example
 * ```ts
 * const options: BackendRunOptions = { backend: () => myBackend, policy: newestFirst };
 * ```
 */
export interface BackendRunOptions extends RunOptions, Pick<L.KernelRunOptions, "policy" | "random" | "tracer"> {}

/**
 * `run` with the kernel's seams (a scheduling policy, a random source, a
 * tracer): what a runtime that drives its own backend, such as
 * `@bobbin/sim`'s world, starts a run with. A program calls `run`.
 *
 * @example
 * ```ts
 * await runOnBackend(main, { backend: () => world.backend, random: world.ties, policy: world.policy });
 * ```
 * @throws (rejects with) what `run` rejects with.
 * @throws TypeError / RangeError for invalid options or a backend missing
 * methods of the contract (synchronously).
 */
export function runOnBackend<T>(main: B.TaskBody<[], T>, options: BackendRunOptions = {}): Promise<T> {
  return startRun("runOnBackend", main, options, true);
}
