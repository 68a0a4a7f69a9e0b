/**
 * The flight recorder of a domain: a ring of its last kernel events, kept
 * while the run asks for it (`run(main, { flightRecorder })`), read by dumps
 * and attached to `Deadlock` and `InternalError` reports.
 *
 * The kernel records its trace points itself — spawn, park, wake, cancel,
 * end (a task's start is its first `run`) — as a few stores into this ring's
 * typed arrays at each point, written there rather than called: a call per
 * event cost more than its stores, and V8 does not inline a call that a
 * process ran rarely before (one run after many without a recorder). V8
 * inlines a call only where it ran for a good share of its function's calls
 * (`--min-inlining-frequency`, counted over the process's life), which a
 * call under `if (recorder !== null)` never reaches after many runs without
 * one: with the five points as methods of the ring, after the diagnostics
 * channels' bench row (2M tasks spawned and ended without a recorder) V8 inlined
 * none of the spawn's, wake's or end's into `adopt` or `terminate`
 * (`--trace-turbo-inlining`), and all of them with that threshold at 0. The
 * loop records three more: a step begins (`run`, which it writes itself when
 * it has nothing else to do around the step), the events backend
 * reported points ready (`io`), a slice ends (`idle`). An event is numbers
 * (and, for a park or an end, what the task waits on or what names it);
 * turning events into words (names, what a task waits on) waits until
 * someone reads the ring.
 *
 * A clock read costs more than recording a step (from 25 ns to over 150 ns,
 * as machines go), so events are not timed one by one: each carries the
 * loop's last clock read — at the start of a slice, every few steps (at most
 * 64) and at its end, at an answer of the events backend, at
 * a wake from a Node callback — and reading the ring spreads the events
 * between two reads evenly over that interval, in their order.
 */
import type { DomainFlight, FlightEvent, FlightEventKind, FlightTask } from "./flight.js";
import { describeWaiter } from "./guards.js";
import type { Recorder } from "./host.js";
import { F, nameFrom, STATUS, type Task, type Waiter } from "./task.js";
import { childrenOf } from "./tree.js";

/** @internal What an event is, in the low bits of its code (`Kind.Kinds`). */
export const enum Kind {
  Spawn = 0,
  /** Never recorded alone: a task starts in its first step (`RunStart`). */
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
  /**
   * An end on the kernel's own domain, with nothing in `others`: `EndHere +`
   * the `State` the task ended in (10 to 13). An end on a domain the reader
   * must be told of (the kernel simulates domains or has others) is `End`.
   */
  EndHere = 10,
  /** Not a kind: kinds fit below this, as an event's code is `uid * Kind.Kinds + kind`. */
  Kinds = 16,
}

const KIND_NAMES: readonly FlightEventKind[] = ["spawn", "start", "run", "park", "wake", "cancel", "end", "io", "idle"];

/** What names a task of the ring, and the domain it ran on. */
interface Whereabouts {
  readonly name: string;
  readonly domain: number;
}

/** The most events a ring may keep per domain. */
export const MAX_FLIGHT_EVENTS = 1 << 20;

/**
 * @internal The ring. The kernel writes an event where `next` points — its
 * code into `codes`, what more it says into `others` or `refs` — and then
 * moves `next` on, calling `wrapped` when it reaches `capacity`.
 */
export class FlightRecorder implements Recorder {
  /** Each event's task uid (0: no task) and kind, as `uid * Kind.Kinds + kind`: one store per event. */
  readonly codes: Float64Array;
  /**
   * spawn: the parent's uid; wake: the waker's (0: woken from outside any
   * task); io: how many points were ready; `End`: 4 × (1 + the domain it
   * ran on) + the `State` it ended in. Other kinds leave their slot as it
   * was, `EndHere` too (its state is in its code: a store less per end).
   */
  readonly others: Float64Array;
  /**
   * end: what names the task (task.ts's `nameSource`: a task's end is its
   * last event, so a task named in the ring has ended there or is still in
   * the tree); park: what it waits on. Other events leave their slot as it
   * was: uids and numbers go to typed arrays, since storing a young object
   * into an old array is a write barrier's slow path, which a step must not
   * pay for each event. That is why an end keeps what names its task (a name
   * or a body's prototype, made before the task) rather than the task, which
   * it would also keep alive.
   */
  readonly refs: unknown[];
  /** The slot of the next event. */
  next = 0;
  /** How many times the ring wrapped: `wraps * capacity + next` events were recorded, overwritten ones included. */
  private wraps = 0;
  /**
   * The clock reads, in a ring of their own: a read's time, and how many
   * events had been recorded when it was made. An event carries the last
   * read before it, found when the ring is read; a read with no event since
   * the one before takes that one's place.
   */
  private readonly reads: Float64Array;
  private readonly readAt: Float64Array;
  private lastRead = 0;
  /**
   * The uid of the task whose step runs, from its `run` until the slice
   * ends or polls: what it wakes, even as it ends (after its fiber
   * returned), it woke. 0: none.
   */
  stepping = 0;

  constructor(readonly capacity: number) {
    this.codes = new Float64Array(capacity);
    this.others = new Float64Array(capacity);
    this.refs = new Array<unknown>(capacity).fill(null);
    // One more read than events: the one an event carries may precede every event kept.
    this.reads = new Float64Array(capacity + 1);
    this.readAt = new Float64Array(capacity + 1);
    this.reads[0] = performance.now();
  }

  /** `next` reached `capacity`: the ring starts over. */
  wrapped(): void {
    this.next = 0;
    this.wraps++;
  }

  /** Records an event of the loop's; returns its slot. */
  private push(kind: Kind, uid: number): number {
    const i = this.next;
    this.codes[i] = uid * Kind.Kinds + kind;
    if (++this.next === this.capacity) this.wrapped();
    return i;
  }

  /** Events recorded since the start, overwritten ones included. */
  private get total(): number {
    return this.wraps * this.capacity + this.next;
  }

  /**
   * A task ended in its first step without starting (cancelled before it
   * ran): that step's `run` said it would start. Rare enough to look for.
   */
  neverStarted(uid: number): void {
    const runStart = uid * Kind.Kinds + Kind.RunStart;
    for (let back = 1, i = this.next; back <= this.capacity; back++) {
      i = i === 0 ? this.capacity - 1 : i - 1;
      if (this.codes[i] === runStart) {
        this.codes[i] = uid * Kind.Kinds + Kind.Run;
        return;
      }
    }
  }

  /** @internal The loop read its clock: `now`. */
  clock(now: number): void {
    const total = this.total;
    let r = this.lastRead;
    if (this.readAt[r] !== total) {
      r = r + 1 === this.reads.length ? 0 : r + 1;
      this.lastRead = r;
      this.readAt[r] = total;
    }
    this.reads[r] = now;
  }

  /**
   * @internal A step of `task` begins; its first also starts it (the `start`
   * trace point, which the kernel does not record: one slot less per task),
   * unless it ends the task instead (see `neverStarted`).
   */
  run(task: Task): void {
    const uid = task.uid;
    this.stepping = uid;
    this.push((task.flags & F.STARTED) === 0 ? Kind.RunStart : Kind.Run, uid);
  }

  /** @internal The events backend reported `ready` points ready. */
  io(ready: number): void {
    this.stepping = 0;
    this.clock(performance.now());
    this.others[this.push(Kind.Io, 0)] = ready;
  }

  /** @internal A slice of the loop ended: Node's loop runs until the next one. */
  idle(): void {
    this.stepping = 0;
    this.clock(performance.now());
    this.push(Kind.Idle, 0);
  }

  /**
   * @internal The recorded events, oldest first, in words. A task is named,
   * and placed on its domain, by its end event in the ring, or else from the
   * tree under `tops` (the domain's tasks without a parent), where
   * `domainOf` says which domain a task runs on (`domain` for events of no
   * task, or of a task not found).
   */
  flight(domain: number, domainOf: (task: Task) => number, tops: readonly Task[]): DomainFlight {
    const total = this.total;
    const n = Math.min(total, this.capacity);
    const first = total > this.capacity ? this.next : 0;
    const at = spread(this.timesOf(total - n, n));
    const kinds = new Uint8Array(n);
    const uids = new Float64Array(n);
    // What more each event says: an end on the kernel's own domain says it as `End` does (4 × 0 + its state).
    const others = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      const i = (first + j) % this.capacity;
      const code = this.codes[i]!;
      const kind = code % Kind.Kinds;
      uids[j] = (code - kind) / Kind.Kinds;
      if (kind >= Kind.EndHere) {
        kinds[j] = Kind.End;
        others[j] = kind - Kind.EndHere;
      } else {
        kinds[j] = kind;
        if (kind === Kind.Spawn || kind === Kind.Wake || kind === Kind.Io || kind === Kind.End) others[j] = this.others[i]!;
      }
    }
    const ends = new Map<number, number>();
    for (let j = 0; j < n; j++) if (kinds[j] === Kind.End) ends.set(uids[j]!, j);
    const live = new Map<number, Task>();
    const walk = [...tops];
    for (let task = walk.pop(); task !== undefined; task = walk.pop()) {
      if (!ends.has(task.uid)) live.set(task.uid, task);
      walk.push(...childrenOf(task));
    }
    const found = new Map<number, Whereabouts>();
    const whereabouts = (uid: number): Whereabouts => {
      let w = found.get(uid);
      if (w !== undefined) return w;
      const end = ends.get(uid);
      const task = live.get(uid);
      if (end !== undefined) {
        const ranOn = Math.floor(others[end]! / 4);
        w = { name: nameFrom(this.refs[(first + end) % this.capacity] as Task["gen"]), domain: ranOn === 0 ? domain : ranOn - 1 };
      } else w = task === undefined ? { name: "(a task)", domain } : { name: task.name, domain: domainOf(task) };
      found.set(uid, w);
      return w;
    };
    const named = (uid: number): FlightTask | null => (uid === 0 ? null : { uid, name: whereabouts(uid).name });
    const events: FlightEvent[] = [];
    for (let j = 0; j < n; j++) {
      const i = (first + j) % this.capacity;
      const kind = kinds[j] as Kind;
      const uid = uids[j]!;
      const other = others[j]!;
      const event: FlightEvent = {
        kind: KIND_NAMES[kind === Kind.RunStart ? Kind.Run : kind]!,
        at: at[j]!,
        domain: uid === 0 ? domain : whereabouts(uid).domain,
        task: named(uid),
        by: kind === Kind.Spawn || kind === Kind.Wake ? named(other) : null,
        detail: detailOf(kind, this.refs[i], other),
      };
      events.push(event);
      if (kind === Kind.RunStart) events.push({ ...event, kind: "start" });
    }
    return { domain, events, dropped: total - n };
  }
  /**
   * The clock read each of the `n` events from the `from`th recorded
   * carries: the last read made before it was recorded.
   */
  private timesOf(from: number, n: number): Float64Array {
    const times = new Float64Array(n);
    const size = this.reads.length;
    // Back from the last read to the one the first event carries (reads are kept for at least as many events as the ring).
    let r = this.lastRead;
    for (let back = 1; back < size && this.readAt[r]! > from; back++) r = r === 0 ? size - 1 : r - 1;
    for (let j = 0; j < n; j++) {
      // On to the last read made before the event.
      while (r !== this.lastRead) {
        const next = r + 1 === size ? 0 : r + 1;
        if (this.readAt[next]! > from + j) break;
        r = next;
      }
      times[j] = this.reads[r]!;
    }
    return times;
  }
}

/**
 * The events' times in ms since the epoch, from the clock reads they carry:
 * each run of events that carry the same read is spread evenly from it to
 * the next read (the last run stays at its read).
 */
function spread(times: Float64Array): Float64Array {
  const n = times.length;
  const at = new Float64Array(n);
  const origin = performance.timeOrigin;
  let start = 0;
  while (start < n) {
    const t0 = times[start]!;
    let end = start + 1;
    while (end < n && times[end] === t0) end++;
    const span = end < n ? times[end]! - t0 : 0;
    for (let j = start; j < end; j++) at[j] = origin + t0 + (span * (j - start)) / (end - start);
    start = end;
  }
  return at;
}

function detailOf(kind: Kind, ref: unknown, other: number): string | null {
  switch (kind) {
    case Kind.Park:
      return ref === null ? "an operation that woke it within the step" : describeWaiter(ref as Waiter);
    case Kind.End:
      return STATUS[other % 4]!;
    case Kind.Io:
      return `${other} ready`;
    default:
      return null;
  }
}
