import type { DomainFlight } from "../kernel/flight.js";

/**
 * What a dump is: the task tree of a run as plain data (made by `dump`, in
 * dump.ts; printed by `formatDump`; held by `Deadlock` errors). A leaf: it
 * imports nothing, so that the errors can hold a dump without importing
 * the kernel that makes it (the flight recorder's event types are types alone).
 */

/**
 * How a task stands in a dump: `running` (it is the task that took the
 * dump), `ready` (queued to run), `waiting` (parked: `waitsOn` says on what),
 * `ending` (its body ended; it waits for its children), or how it ended
 * (`resolved`, `failed`, `cancelled`: ended, not yet awaited by its parent).
 *
 * @example
 * ```ts
 * const waiting = (yield* B.promise(() => B.dump())).tasks.filter((t) => t.state === "waiting");
 * ```
 */
export type TaskState = "running" | "ready" | "waiting" | "ending" | "resolved" | "failed" | "cancelled";

/**
 * One task of a {@link Dump}, with its subtree.
 *
 * @example
 * ```ts
 * const walk = (t: B.TaskDump): number => 1 + t.children.reduce((n, c) => n + walk(c), 0);
 * ```
 */
export interface TaskDump {
  readonly uid: number;
  readonly name: string;
  /** The domain it runs on (0: the main thread). */
  readonly domain: number;
  readonly state: TaskState;
  /** Whether its cancellation was asked for and it has not ended yet. */
  readonly cancelling: boolean;
  /** How long ago it was spawned, in ms; null when the run keeps no ages (see `run`'s `taskAges`). */
  readonly ageMs: number | null;
  /** What it waits on, in words ("lock Mutex#3 held by handler#9", "call → domain 2"); null unless `waiting`. */
  readonly waitsOn: string | null;
  /**
   * Where it waits: `file:line` of the `yield*` it parked at; null unless
   * `waiting` in a run that keeps traces (see `run`'s `traces`).
   */
  readonly suspendedAt: string | null;
  /** Its children, oldest first; for a call to another domain, the task running there. */
  readonly children: readonly TaskDump[];
}

/**
 * The task tree of a run: see {@link dump}.
 *
 * @example
 * ```ts
 * const d: B.Dump = await B.dump();
 * console.log(d.tasks.length, "top-level tasks; unanswered domains:", d.unanswered);
 * ```
 */
export interface Dump {
  /** When it was taken (`Date.now()`). */
  readonly takenAt: number;
  /** The tasks without a parent (each run's root, then its system tasks), with their subtrees. */
  readonly tasks: readonly TaskDump[];
  /** Worker domains that did not answer in time (busy in a synchronous loop, say): their subtrees are missing. */
  readonly unanswered: readonly number[];
  /** The flight recorder of each domain that answered, when the run keeps one (`run`'s `flightRecorder`); empty otherwise. */
  readonly flight: readonly DomainFlight[];
}
