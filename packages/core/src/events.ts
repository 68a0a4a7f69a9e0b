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
 * select(block, cancelled) { return ready.map((s) => L.signal(s)); }
 * ```
 */
export type Signal = { readonly [signalBrand]: "Signal" };

/**
 * A suspension point's identifier, unique within its thread.
 *
 * @example
 * ```ts
 * const id: L.Uid = L.uid(L.syscall());
 * ```
 */
export type Uid = number;

/**
 * A domain's events backend.
 *
 * - `select(block, cancelled)` returns the signals of ready suspension points.
 *   The kernel calls it while tasks wait on the backend — suspended on a
 *   syscall, or `pending()` says so: with `block = true` when no task is
 *   ready, so it may wait; with `block = false` every `pollEvery` steps
 *   otherwise, so a busy domain still sees I/O, and then it must not wait. `cancelled`
 *   lists, exactly once each, the uids of suspension points whose task was
 *   cancelled: forget them. It may return a Promise when the backend is driven
 *   by Node's loop; the scheduler then returns to the loop until it settles. A
 *   blocking `select` that answers at once with nothing ready sends the
 *   scheduler back to Node's loop too: while syscalls wait, it is asked again
 *   after one turn of the loop (so it may hear of readiness from Node's
 *   callbacks).
 * - `interrupt()` makes a pending `select` return promptly (a task was woken
 *   from elsewhere).
 * - `finaliser()` runs once when the domain stops.
 * - `pending()` (optional): whether tasks wait on the backend other than
 *   through syscalls — operations built on `Suspender`, which the backend
 *   wakes itself, but which need `select` to run (it drains a poller, or
 *   advances a virtual clock).
 * - `batchWakes` (optional): tasks woken from outside the run loop (from
 *   Node's callbacks) run together once Node's current loop phase is over
 *   (`setImmediate`), rather than after each callback (a microtask): for a
 *   backend whose readiness arrives as one callback per socket, one slice of
 *   the scheduler then runs everything a poll of the loop made ready.
 *
 * @example
 * ```ts
 * const events = (domain: number): L.Events => ({
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
  pending?(): boolean;
  readonly batchWakes?: boolean;
}
