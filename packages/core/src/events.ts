/**
 * The events contract: how a scheduler meets the world (Miou's `events`).
 *
 * A task creates a suspension point with `syscall()`, registers the real
 * operation and parks with `yield* suspend(s, register)`. The domain's
 * backend reports readiness by returning `signal(s)` from `select`.
 */

declare const signalBrand: unique symbol;

/**
 * A suspension point reported ready by `select`: the result of `signal(s)`.
 *
 * @example
 * ```ts
 * select(block, cancelled) { return ready.map((s) => B.signal(s)); }
 * ```
 */
export type Signal = { readonly [signalBrand]: "Signal" };

/**
 * A suspension point's identifier, unique within its thread.
 *
 * @example
 * ```ts
 * const id: B.Uid = B.uid(B.syscall());
 * ```
 */
export type Uid = number;

/**
 * A domain's events backend.
 *
 * - `select(block, cancelled)` returns the signals of ready suspension points.
 *   With `block = true` the run queue is empty and only suspended tasks
 *   remain, so it may wait; with `block = false` it must not. `cancelled`
 *   lists, exactly once each, the uids of suspension points whose task was
 *   cancelled: forget them. It may return a Promise when the backend is driven
 *   by Node's loop; the scheduler then returns to the loop until it settles.
 * - `interrupt()` makes a pending `select` return promptly (a task was woken
 *   from elsewhere).
 * - `finaliser()` runs once when the domain stops.
 *
 * @example
 * ```ts
 * const events = (domain: number): B.Events => ({
 *   select: (block, cancelled) => { forget(cancelled); return block ? waitForReady() : readyNow(); },
 *   interrupt: () => wakeUpSelect(),
 *   finaliser: () => closeEverything(),
 * });
 * await B.run(main, { events });
 * ```
 */
export interface Events {
  select(block: boolean, cancelled: readonly Uid[]): Signal[] | Promise<Signal[]>;
  interrupt(): void;
  finaliser?(): void;
}
