/** The counters of a poller (and of the native backend, whose poller it is). */

/**
 * What a {@link Poller} has delivered, counted as it goes (stale events
 * included: they were drained, then filtered out).
 *
 * @example
 * ```ts
 * const { batches, batchEvents, polls, pollEvents, readsAhead, sends } = poller.stats;
 * console.log(`${batchEvents / batches} events per batch from Node's loop, ${pollEvents} drained by ${polls} polls`);
 * ```
 * @throws never (a type).
 */
export interface PollerStats {
  /** Batches delivered by Node's loop. */
  readonly batches: number;
  /** Events those batches drained. */
  readonly batchEvents: number;
  /** Calls of {@link Poller.poll}. */
  readonly polls: number;
  /** Events those calls drained. */
  readonly pollEvents: number;
  /** Reads the batches did ahead for fds given a size with {@link Poller.want} (their `read` was not `NOT_READ`). */
  readonly readsAhead: number;
  /** Sends queued with {@link Poller.stage} and submitted. */
  readonly sends: number;
}
