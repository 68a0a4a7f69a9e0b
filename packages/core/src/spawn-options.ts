/**
 * The options of `spawn`: a program's type, apart from the spawn and exit
 * hooks of lifecycle.ts, which are the low-level entry's.
 */
import type { Orphans } from "./orphans.js";

/**
 * Options of {@link spawn}, given first: `spawn({ orphans, give, name }, fn, ...args)`.
 *
 * @example
 * ```ts
 * const bg = B.orphans();
 * B.spawn({ orphans: bg }, echo, client);
 * ```
 */
export interface SpawnOptions {
  /** Put the task in this collector, to be found again with `care`. */
  readonly orphans?: Orphans<unknown> | undefined;
  /**
   * Resources to move to the child: values marked `L.givable` (`@bobbin/sync`'s
   * `Resource`), which the spawn hook of the package that made them moves.
   */
  readonly give?: readonly unknown[] | undefined;
  /** The task's name in errors and diagnostics (default: the body function's name). */
  readonly name?: string | undefined;
}
