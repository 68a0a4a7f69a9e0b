/**
 * What a flight recorder (recorder.ts) hands out: its events, as plain
 * data. A leaf: it imports nothing, so that the errors and the dumps that
 * carry these events do not import the kernel that records them.
 */

/**
 * What a flight recorder event is: `spawn` (a task was made; `by` is its
 * parent), `start` (its body's first step), `run` (a step of it begins: it
 * runs until the next `run` or `idle` of its domain), `park` (it waits;
 * `detail` says on what), `wake` (it is ready again; `by` is the task that
 * woke it, null when a Node callback, the events backend or another domain
 * did), `cancel` (its cancellation was asked for), `end` (it and its subtree
 * ended; `detail` says how), `io` (the events backend reported points
 * ready; `detail` says how many), `idle` (a slice of the loop ended: Node's
 * loop runs until the next `run`).
 *
 * @example
 * ```ts
 * const parks = events.filter((e: B.FlightEvent) => e.kind === "park");
 * ```
 */
export type FlightEventKind = "spawn" | "start" | "run" | "park" | "wake" | "cancel" | "end" | "io" | "idle";

/**
 * A task as a flight recorder event names it.
 *
 * @example
 * ```ts
 * const label = (t: B.FlightTask) => `${t.name}#${t.uid}`;
 * ```
 */
export interface FlightTask {
  readonly uid: number;
  readonly name: string;
}

/**
 * One event of a flight recorder (see {@link FlightEventKind}).
 *
 * @example
 * ```ts
 * const line = (e: B.FlightEvent) => `${e.at.toFixed(3)} dom${e.domain} ${e.kind} ${e.task?.name ?? ""}`;
 * ```
 */
export interface FlightEvent {
  readonly kind: FlightEventKind;
  /**
   * When, in ms since the epoch: comparable across the domains of a run.
   * The clock is read every few steps (see the `flightRecorder` option);
   * the events between two reads are spread evenly between them.
   */
  readonly at: number;
  /** The domain it happened on (the task's, for events of a task). */
  readonly domain: number;
  /** The task it is about; null for `io` and `idle`. */
  readonly task: FlightTask | null;
  /** `spawn`: the parent; `wake`: the task that woke it (null: woken from outside any task). */
  readonly by: FlightTask | null;
  /** `park`: what it waits on, as the operation describes itself when the ring is read; `end`: how it ended; `io`: how many points were ready. */
  readonly detail: string | null;
}

/**
 * The flight recorder of one domain, as a dump holds it: its last events,
 * oldest first, and how many older ones the ring overwrote.
 *
 * @example
 * ```ts
 * for (const f of (await B.dump()).flight) console.log(`domain ${f.domain}: ${f.events.length} events, ${f.dropped} overwritten`);
 * ```
 */
export interface DomainFlight {
  readonly domain: number;
  readonly events: readonly FlightEvent[];
  readonly dropped: number;
}
