/**
 * Virtual time: the world's clock and its agenda, the events to come (timers,
 * deadlines, packets in flight) ordered by time, then by the order they were
 * scheduled in. The clock moves only when the world has nothing else to do:
 * then it jumps to the next event, and every event of that instant fires.
 */
import { type Deadline, DeadlineHeap } from "@bobbin/unix/backend";

/**
 * Something that happens at a virtual instant: an entry of `@bobbin/unix`'s
 * deadline heap, whose time the clock sets when it schedules it.
 *
 * @internal
 */
export interface Event extends Deadline {
  at: number;
}

/** @internal The world's clock, in milliseconds since the simulation started. */
export class Clock {
  /** The current virtual time (ms). */
  now = 0;
  /** The events to come: by time, then in the order they were scheduled. */
  private readonly agenda = new DeadlineHeap();
  /** Hears each event as it fires (`explore` notes what it touches). */
  onFire: ((event: Event) => void) | null = null;

  /** How many events are to come. */
  get pending(): number {
    return this.agenda.size;
  }

  /** When the next event happens, or `Infinity` when none is to come. */
  get next(): number {
    return this.agenda.peek()?.at ?? Infinity;
  }

  /** Schedules `event` at `at` (never in the past); an event already scheduled moves. */
  schedule(event: Event, at: number): void {
    this.agenda.remove(event);
    event.at = Math.max(at, this.now);
    this.agenda.push(event);
  }

  /** Forgets `event` if it is scheduled. */
  cancel(event: Event): void {
    this.agenda.remove(event);
  }

  /** Fires, in order, every event due at the current time; returns how many fired. */
  fireDue(): number {
    let fired = 0;
    for (let event = this.agenda.peek(); event !== undefined && event.at <= this.now; event = this.agenda.peek()) {
      this.agenda.pop();
      fired++;
      this.onFire?.(event);
      event.fire();
    }
    return fired;
  }

  /** Moves the clock to the next event (never past `limit`) and fires that instant's events; false when none is due by `limit`. */
  advance(limit: number): boolean {
    const next = this.next;
    if (next === Infinity || next > limit) return false;
    if (next > this.now) this.now = next;
    this.fireDue();
    return true;
  }

  /** Forgets every event. */
  clear(): void {
    this.agenda.clear();
  }
}

/**
 * A callback at a virtual instant: a deadline of `withTimeout`, a timer of
 * the patched `setTimeout`.
 *
 * @internal
 */
export class CallbackEvent implements Event {
  at = 0;
  heapIndex = -1;
  constructor(readonly fire: () => void) {}
}
