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
import type { DomainFlight, FlightEvent, FlightEventKind, FlightTask } from "./flight.js";
import { describeWaiter } from "./guards.js";
import { waiterOf } from "./state.js";
import type { Task, Waiter } from "./task.js";
import { childrenOf } from "./tree.js";

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
  /** A task's first step: `run` then `start`, in one slot. */
  RunStart = 9,
}

const KIND_NAMES: readonly FlightEventKind[] = ["spawn", "start", "run", "park", "wake", "cancel", "end", "io", "idle"];

/** The most events a ring may keep per domain. */
export const MAX_FLIGHT_EVENTS = 1 << 20;

/** @internal */
export class FlightRecorder {
  private readonly kinds: Uint8Array;
  private readonly times: Float64Array;
  /** The task's uid (0: no task). */
  private readonly uids: Float64Array;
  /** spawn: the parent's uid; wake: the waker's (0: woken from outside any task); io: how many points were ready. */
  private readonly others: Float64Array;
  /**
   * end: the task (read for its name: a task's end is its last event, so a
   * task named in the ring has ended there or is still in the tree); park:
   * what it waits on. Other events leave their slot as it was: uids and
   * numbers go to typed arrays, since storing a young object into an old
   * array is a write barrier's slow path, which a step must not pay for
   * each event.
   */
  private readonly refs: unknown[];
  private next = 0;
  /** Events recorded since the start, overwritten ones included. */
  private total = 0;
  /** The last clock read: an event carries it, and reading the ring spreads the events between two reads. */
  private now = performance.now();
  /**
   * The uid of the task whose step runs, from its `run` until the slice
   * ends or polls: what it wakes, even as it ends (after its fiber
   * returned), it woke. 0: none.
   */
  private stepping = 0;

  constructor(readonly capacity: number) {
    this.kinds = new Uint8Array(capacity);
    this.times = new Float64Array(capacity);
    this.uids = new Float64Array(capacity);
    this.others = new Float64Array(capacity);
    this.refs = new Array<unknown>(capacity).fill(null);
  }

  /** Records an event; returns its slot (for `refs`). */
  private push(kind: Kind, uid: number, other: number): number {
    const i = this.next;
    this.kinds[i] = kind;
    this.times[i] = this.now;
    this.uids[i] = uid;
    this.others[i] = other;
    this.next = i + 1 === this.capacity ? 0 : i + 1;
    this.total++;
    return i;
  }

  spawn(task: Task, parent: Task): void {
    this.push(Kind.Spawn, task.uid, parent.uid);
  }

  /** A task starts in the step just recorded (its `run`): that slot says so, rather than a slot of its own. */
  start(task: Task): void {
    const last = (this.next === 0 ? this.capacity : this.next) - 1;
    if (this.kinds[last] === Kind.Run && this.uids[last] === task.uid) this.kinds[last] = Kind.RunStart;
    else this.push(Kind.Start, task.uid, 0);
  }

  suspend(task: Task): void {
    this.refs[this.push(Kind.Park, task.uid, 0)] = waiterOf(task);
  }

  resume(task: Task): void {
    const waker = this.stepping;
    if (waker === 0) this.now = performance.now(); // woken from a Node callback or a poll: a time of its own
    this.push(Kind.Wake, task.uid, waker);
  }

  cancel(task: Task): void {
    this.push(Kind.Cancel, task.uid, 0);
  }

  end(task: Task): void {
    this.refs[this.push(Kind.End, task.uid, 0)] = task;
  }

  /** @internal The loop read its clock: `now`. */
  clock(now: number): void {
    this.now = now;
  }

  /** @internal A step of `task` begins. */
  run(task: Task): void {
    const uid = task.uid;
    this.stepping = uid;
    this.push(Kind.Run, uid, 0);
  }

  /** @internal The events backend reported `ready` points ready. */
  io(ready: number): void {
    this.stepping = 0;
    this.now = performance.now();
    this.push(Kind.Io, 0, ready);
  }

  /** @internal A slice of the loop ended: Node's loop runs until the next one. */
  idle(): void {
    this.stepping = 0;
    this.now = performance.now();
    this.push(Kind.Idle, 0, 0);
  }

  /**
   * @internal The recorded events, oldest first, in words. A task is named
   * from its spawn or end event in the ring, or else from the tree under
   * `tops` (the domain's tasks without a parent); `domainOf` says which
   * domain a task runs on (`domain` for events of no task, or of a task not
   * found).
   */
  flight(domain: number, domainOf: (task: Task) => number, tops: readonly Task[]): DomainFlight {
    const n = Math.min(this.total, this.capacity);
    const first = this.total > this.capacity ? this.next : 0;
    const at = this.spread(first, n);
    const known = new Map<number, Task>();
    for (let j = 0; j < n; j++) {
      const i = (first + j) % this.capacity;
      const kind = this.kinds[i] as Kind;
      if (kind === Kind.End) known.set(this.uids[i]!, this.refs[i] as Task);
    }
    const walk = [...tops];
    for (let task = walk.pop(); task !== undefined; task = walk.pop()) {
      if (!known.has(task.uid)) known.set(task.uid, task);
      walk.push(...childrenOf(task));
    }
    const named = (uid: number): FlightTask | null => (uid === 0 ? null : { uid, name: known.get(uid)?.name ?? "(a task)" });
    const events: FlightEvent[] = [];
    for (let j = 0; j < n; j++) {
      const i = (first + j) % this.capacity;
      const kind = this.kinds[i] as Kind;
      const uid = this.uids[i]!;
      const task = known.get(uid);
      const other = this.others[i]!;
      const event: FlightEvent = {
        kind: KIND_NAMES[kind === Kind.RunStart ? Kind.Run : kind]!,
        at: at[j]!,
        domain: task === undefined ? domain : domainOf(task),
        task: named(uid),
        by: kind === Kind.Spawn || kind === Kind.Wake ? named(other) : null,
        detail: detailOf(kind, task, this.refs[i], other),
      };
      events.push(event);
      if (kind === Kind.RunStart) events.push({ ...event, kind: "start" });
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

function detailOf(kind: Kind, task: Task | undefined, ref: unknown, other: number): string | null {
  switch (kind) {
    case Kind.Park:
      return ref === null ? "an operation that woke it within the step" : describeWaiter(ref as Waiter);
    case Kind.End:
      return task?.status ?? null;
    case Kind.Io:
      return `${other} ready`;
    default:
      return null;
  }
}
