/** The native backend as programs see it: its options, and what it has beyond the contract. */
import type { Backend } from "@bobbin/unix";
import type { ArenaPool, ArenaPoolOptions } from "../arena.js";
import type { PollerStats } from "../poller-stats.js";

/**
 * Options of `nativeBackend`.
 *
 * @example
 * ```ts
 * await run(main, { backend: () => nativeBackend({ batchSize: 256, pool: { slotSize: 4096 } }) });
 * ```
 * @throws never (a type; `nativeBackend` validates it).
 */
export interface NativeBackendOptions {
  /** Events drained per batch. Default 1024. */
  readonly batchSize?: number | undefined;
  /**
   * Drain the set directly when the run queue empties, before waiting in
   * Node's loop (see the README's "The native backend"). Default `true`.
   */
  readonly eagerPoll?: boolean | undefined;
  /**
   * The arena pool behind `readSlot` (a pool, or options for a new one).
   * Default: 16 KiB slots, no cap.
   */
  readonly pool?: ArenaPool | ArenaPoolOptions | undefined;
}

/**
 * The native backend (epoll on Linux, kqueue on macOS), as `nativeBackend`
 * makes it: a `Backend` with its arena pool and the poller's counters.
 *
 * @example
 * ```ts
 * let backend!: NativeBackend;
 * await run(main, { backend: () => (backend = nativeBackend()) });
 * console.log(backend.stats.batches, backend.pool.stats.slotsInUse);
 * ```
 * @throws never (a type).
 */
export interface NativeBackend extends Backend {
  /** The arena pool behind `readSlot`. */
  readonly pool: ArenaPool;
  /**
   * Counters for tuning, the poller's: batches delivered by Node's loop,
   * drains done by `select`, and the events each brought.
   */
  readonly stats: PollerStats;
}
