/**
 * Virtual time: the world's clock and its agenda, the events to come (timers,
 * deadlines, packets in flight) ordered by time, then by the order they were
 * scheduled in. The clock moves only when the world has nothing else to do:
 * then it jumps to the next event, and every event of that instant fires.
 */

/**
 * Something that happens at a virtual instant. `slot` belongs to the agenda
 * (its place in the heap, −1 when not scheduled).
 *
 * @internal
 */
export interface Event {
  at: number;
  seq: number;
  slot: number;
  fire(): void;
}

/** @internal The world's clock, in milliseconds since the simulation started. */
export class Clock {
  /** The current virtual time (ms). */
  now = 0;
  private readonly heap: Event[] = [];
  private seq = 0;

  /** How many events are to come. */
  get pending(): number {
    return this.heap.length;
  }

  /** When the next event happens, or `Infinity` when none is to come. */
  get next(): number {
    return this.heap.length === 0 ? Infinity : this.heap[0]!.at;
  }

  /** Schedules `event` at `at` (never in the past); an event already scheduled moves. */
  schedule(event: Event, at: number): void {
    if (event.slot !== -1) this.cancel(event);
    event.at = Math.max(at, this.now);
    event.seq = this.seq++;
    event.slot = this.heap.length;
    this.heap.push(event);
    this.up(event.slot);
  }

  /** Forgets `event` if it is scheduled. */
  cancel(event: Event): void {
    const i = event.slot;
    if (i === -1) return;
    const heap = this.heap;
    const last = heap.pop()!;
    event.slot = -1;
    if (last === event) return;
    heap[i] = last;
    last.slot = i;
    this.down(i);
    this.up(last.slot);
  }

  /** Fires, in order, every event due at the current time; returns how many fired. */
  fireDue(): number {
    let fired = 0;
    const heap = this.heap;
    while (heap.length !== 0 && heap[0]!.at <= this.now) {
      const event = this.pop();
      fired++;
      event.fire();
    }
    return fired;
  }

  /** Moves the clock to the next event (never past `limit`) and fires that instant's events; false when none is due by `limit`. */
  advance(limit: number): boolean {
    if (this.heap.length === 0) return false;
    const next = this.heap[0]!.at;
    if (next > limit) return false;
    if (next > this.now) this.now = next;
    this.fireDue();
    return true;
  }

  /** Forgets every event. */
  clear(): void {
    for (const event of this.heap) event.slot = -1;
    this.heap.length = 0;
  }

  private pop(): Event {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    top.slot = -1;
    if (last !== top) {
      heap[0] = last;
      last.slot = 0;
      this.down(0);
    }
    return top;
  }

  private before(x: Event, y: Event): boolean {
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  private up(i: number): void {
    const heap = this.heap;
    const event = heap[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = heap[p]!;
      if (!this.before(event, parent)) break;
      heap[i] = parent;
      parent.slot = i;
      i = p;
    }
    heap[i] = event;
    event.slot = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const event = heap[i]!;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && this.before(heap[c + 1]!, heap[c]!)) c++;
      const child = heap[c]!;
      if (!this.before(child, event)) break;
      heap[i] = child;
      child.slot = i;
      i = c;
    }
    heap[i] = event;
    event.slot = i;
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
  seq = 0;
  slot = -1;
  constructor(readonly fire: () => void) {}
}
