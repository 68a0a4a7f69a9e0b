/**
 * Chapter 8's stop condition: the book's `condition` and `mutex_sigint`,
 * which the SIGINT handler broadcasts (`stop`), and which every server waits
 * on beside `accept` (`or_die`).
 *
 * As in the book, one condition and one mutex serve every domain: they are
 * `@bobbin/sync`'s shared ones (`Condition.shared()`, `Mutex.shared()`), given
 * to the worker domains' servers with their other arguments, and a broadcast
 * from dom0's signal handler wakes the waiters of every domain. A `Shutdown` is
 * a plain object, so it crosses to worker domains as it is.
 *
 * One departure: a flag under the mutex (`requested`, in shared memory so that
 * every domain reads the same). The book's `or_die` waits on the condition
 * with no predicate, so a broadcast sent while a server is between two
 * `accept_or_die` (printing, spawning) would be lost and that server would
 * never stop; and a `Condition` may wake spuriously.
 */
import type * as B from "@bobbin/core";
import { Condition, Mutex } from "@bobbin/sync";

/** The stop condition of a run, shared by every domain. */
export interface Shutdown {
  /** The book's `mutex_sigint`. */
  readonly mutex: Mutex;
  /** The book's `condition`. */
  readonly condition: Condition;
  /** `requested[0]` is 1 once a stop was requested (read and written under `mutex`). */
  readonly requested: Int32Array;
}

/**
 * A stop condition for every domain: make it on dom0, give it to the
 * parallel servers.
 *
 * @example
 * ```ts
 * const shutdown = newShutdown();
 * B.parallel(serverTask, domains.map(() => ({ ...config, shutdown })));
 * ```
 */
export function newShutdown(): Shutdown {
  return { mutex: Mutex.shared(), condition: Condition.shared(), requested: new Int32Array(new SharedArrayBuffer(4)) };
}

/** Whether a stop was requested (hold `shutdown.mutex`). */
export function requested(shutdown: Shutdown): boolean {
  return Atomics.load(shutdown.requested, 0) === 1;
}

/**
 * The book's `stop`: marks the stop as requested and wakes every waiter, on
 * every domain.
 *
 * @example
 * ```ts
 * onSignal("SIGINT", function* () { yield* stop(shutdown); });
 * ```
 */
export function stop(shutdown: Shutdown): B.Operation<void> {
  return shutdown.mutex.protect(() => {
    Atomics.store(shutdown.requested, 0, 1);
    shutdown.condition.broadcast();
  });
}

/**
 * The book's `or_die` body: waits until a stop is requested.
 *
 * @example
 * ```ts
 * yield* untilStop(shutdown);   // then `Die`
 * ```
 */
export function untilStop(shutdown: Shutdown): B.Operation<void> {
  return shutdown.mutex.protect(function* () {
    while (!requested(shutdown)) yield* shutdown.condition.wait(shutdown.mutex);
  });
}
