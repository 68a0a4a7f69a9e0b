/**
 * The flight recorder of a domain: a ring of its last kernel events, kept
 * while the run asks for it (`run(main, { flightRecorder })`), read by dumps
 * and attached to `Deadlock` and `InternalError` reports.
 *
 * It is a tracer (trace.ts) for the points the kernel reports already —
 * spawn, start, park, wake, cancel, end — plus three the loop reports while
 * it records (watch.ts): a step begins (`run`), the events backend reported
 * points ready (`io`), a slice ends (`idle`). Recording stores into
 * preallocated arrays; turning events into words (names, what a task waits
 * on) waits until someone reads the ring.
 *
 * A clock read costs more than recording a step (from 25 ns to over 150 ns,
 * as machines go), so events are not timed one by one: each carries the
 * loop's last clock read — at the start of a slice, every few steps (at most
 * 16 while recording) and at its end, at an answer of the events backend, at
 * a wake from a Node callback — and reading the ring spreads the events
 * between two reads evenly over that interval, in their order.
 */
import { describeWaiter } from "./guards.js";
import { waiterOf } from "./state.js";
import type { Task, Waiter } from "./task.js";
import type { Tracer } from "./trace.js";

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

const enum Kind {
  Spawn = 0,
  Start = 1,
  Run = 2,
  Park = 3,
  Wake = 4,
  Cancel = 5,
  End = 6,
  Io = 7,
  Idle = 8,
}

const KIND_NAMES: readonly FlightEventKind[] = ["spawn", "start", "run", "park", "wake", "cancel", "end", "io", "idle"];

/** The most events a ring may keep per domain. */
export const MAX_FLIGHT_EVENTS = 1 << 20;

/** @internal */
export class FlightRecorder implements Tracer {
  private readonly kinds: Uint8Array;
  private readonly times: Float64Array;
  private readonly tasks: (Task | null)[];
  /** spawn: the parent; wake: the waker (null: woken from outside any task). */
  private readonly others: (Task | null)[];
  /** park: the waiter; io: how many points were ready. */
  private readonly details: unknown[];
  private next = 0;
  /** Events recorded since the start, overwritten ones included. */
  private total = 0;
  /** The last clock read: an event carries it, and reading the ring spreads the events between two reads. */
  private now = performance.now();
  /**
   * The task whose step runs, from its `run` until the slice ends or polls:
   * what it wakes, even as it ends (after its fiber returned), it woke.
   */
  private stepping: Task | null = null;

  constructor(readonly capacity: number) {
    this.kinds = new Uint8Array(capacity);
    this.times = new Float64Array(capacity);
    this.tasks = new Array<Task | null>(capacity).fill(null);
    this.others = new Array<Task | null>(capacity).fill(null);
    this.details = new Array<unknown>(capacity).fill(null);
  }

  private push(kind: Kind, task: Task | null, other: Task | null, detail: unknown): void {
    const i = this.next;
    this.kinds[i] = kind;
    this.times[i] = this.now;
    this.tasks[i] = task;
    this.others[i] = other;
    this.details[i] = detail;
    this.next = i + 1 === this.capacity ? 0 : i + 1;
    this.total++;
  }

  spawn(task: Task, parent: Task): void {
    this.push(Kind.Spawn, task, parent, null);
  }

  start(task: Task): void {
    this.push(Kind.Start, task, null, null);
  }

  suspend(task: Task): void {
    this.push(Kind.Park, task, null, waiterOf(task));
  }

  resume(task: Task): void {
    const waker = this.stepping;
    if (waker === null) this.now = performance.now(); // woken from a Node callback or a poll: a time of its own
    this.push(Kind.Wake, task, waker, null);
  }

  cancel(task: Task): void {
    this.push(Kind.Cancel, task, null, null);
  }

  end(task: Task): void {
    this.push(Kind.End, task, null, null);
  }

  /** @internal The loop read its clock: `now`. */
  clock(now: number): void {
    this.now = now;
  }

  /** @internal A step of `task` begins. */
  run(task: Task): void {
    this.stepping = task;
    this.push(Kind.Run, task, null, null);
  }

  /** @internal The events backend reported `ready` points ready. */
  io(ready: number): void {
    this.stepping = null;
    this.now = performance.now();
    this.push(Kind.Io, null, null, ready);
  }

  /** @internal A slice of the loop ended: Node's loop runs until the next one. */
  idle(): void {
    this.stepping = null;
    this.now = performance.now();
    this.push(Kind.Idle, null, null, null);
  }

  /**
   * @internal The recorded events, oldest first, in words; `domainOf` says
   * which domain a task runs on (`domain` for events of no task).
   */
  flight(domain: number, domainOf: (task: Task) => number): DomainFlight {
    const n = Math.min(this.total, this.capacity);
    const first = this.total > this.capacity ? this.next : 0;
    const at = this.spread(first, n);
    const events: FlightEvent[] = [];
    for (let j = 0; j < n; j++) {
      const i = (first + j) % this.capacity;
      const kind = this.kinds[i] as Kind;
      const task = this.tasks[i]!;
      const other = this.others[i]!;
      events.push({
        kind: KIND_NAMES[kind]!,
        at: at[j]!,
        domain: task === null ? domain : domainOf(task),
        task: task === null ? null : { uid: task.uid, name: task.name },
        by: other === null ? null : { uid: other.uid, name: other.name },
        detail: detailOf(kind, task, this.details[i]),
      });
    }
    return { domain, events, dropped: this.total - n };
  }

  /**
   * The times of the `n` events from ring index `first`, in ms since the
   * epoch: each run of events that carry the same clock read is spread
   * evenly from it to the next read (the last run stays at its read).
   */
  private spread(first: number, n: number): Float64Array {
    const at = new Float64Array(n);
    const origin = performance.timeOrigin;
    let start = 0;
    while (start < n) {
      const t0 = this.times[(first + start) % this.capacity]!;
      let end = start + 1;
      while (end < n && this.times[(first + end) % this.capacity] === t0) end++;
      const span = end < n ? this.times[(first + end) % this.capacity]! - t0 : 0;
      for (let j = start; j < end; j++) at[j] = origin + t0 + (span * (j - start)) / (end - start);
      start = end;
    }
    return at;
  }
}

function detailOf(kind: Kind, task: Task | null, detail: unknown): string | null {
  switch (kind) {
    case Kind.Park:
      return detail === null ? "an operation that woke it within the step" : describeWaiter(detail as Waiter);
    case Kind.End:
      return task!.status;
    case Kind.Io:
      return `${detail as number} ready`;
    default:
      return null;
  }
}
