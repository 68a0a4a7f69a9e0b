/** The options of the libuv backend. */
import type { FlushMode } from "../backend/flush-mode.js";

/**
 * Options of `libuv`.
 *
 * @example
 * ```ts
 * export const eager = defineBackend(import.meta.url, "eager", () => libuv({ flush: "microtask" }));
 * ```
 */
export interface LibuvOptions {
  /**
   * When a blocked `select` hears of I/O: `"immediate"` (default) batches
   * everything one poll of libuv made ready; `"microtask"` hands over each
   * callback's readiness at once.
   */
  readonly flush?: FlushMode | undefined;
}
