/**
 * Timers for backends driven by Node's loop: one binary heap of absolute
 * deadlines and a single Node timer armed for the earliest one (Miou's
 * sleepers, with removal: a sleeper cancelled with its task leaves the heap
 * at once, and an empty heap holds no timer).
 */

/**
 * An entry of a {@link DeadlineHeap}: an absolute time (`performance.now()`
 * milliseconds) and what to do then. `heapIndex` belongs to the heap.
 *
 * @example
 * ```ts
 * const entry: Deadline = { at: performance.now() + 50, heapIndex: -1, fire: () => wake() };
 * ```
 */
export interface Deadline {
  readonly at: number;
  /** Position in the heap, `-1` when not in one. Maintained by the heap. */
  heapIndex: number;
  /** Called once when the deadline has passed, from the timer's callback. */
  fire(): void;
}

/**
 * A binary min-heap of deadlines with O(log n) insertion, removal of any
 * entry, and O(1) access to the earliest. Deadlines at the same time leave
 * in the order they were pushed.
 *
 * @example
 * ```ts
 * const heap = new DeadlineHeap();
 * heap.push(entry);
 * heap.peek();        // the earliest entry
 * heap.remove(entry);
 * ```
 * @throws TypeError from `push` when the entry is already in a heap.
 */
export class DeadlineHeap {
  private items: Deadline[] = [];
  /** When each entry was pushed, parallel to `items`: the tie-break between equal times. */
  private pushed: number[] = [];
  private pushes = 0;

  /** How many deadlines are waiting. */
  get size(): number {
    return this.items.length;
  }

  /** The earliest deadline, or `undefined`. */
  peek(): Deadline | undefined {
    return this.items[0];
  }

  /**
   * Adds a deadline.
   * @throws TypeError when it is already in a heap.
   */
  push(entry: Deadline): void {
    if (entry.heapIndex !== -1) throw new TypeError("DeadlineHeap.push: the entry is already in a heap");
    this.items.push(entry);
    this.pushed.push(0); // the new last slot is the hole `up` starts from
    this.up(this.items.length - 1, entry, this.pushes++);
  }

  /** Removes and returns the earliest deadline. */
  pop(): Deadline | undefined {
    const top = this.items[0];
    if (top !== undefined) this.removeAt(0);
    return top;
  }

  /** Removes `entry` if it is in this heap; returns whether it was. */
  remove(entry: Deadline): boolean {
    const i = entry.heapIndex;
    if (i < 0 || this.items[i] !== entry) return false;
    this.removeAt(i);
    return true;
  }

  /** Empties the heap. */
  clear(): void {
    for (const entry of this.items) entry.heapIndex = -1;
    this.items = [];
    this.pushed = [];
  }

  /** Fills the hole left at `i` with the last entry, moved up or down to where it belongs. */
  private removeAt(i: number): void {
    const entry = this.items[i]!;
    const last = this.items.pop()!;
    const lastPushed = this.pushed.pop()!;
    entry.heapIndex = -1;
    if (last === entry) return;
    const p = (i - 1) >> 1;
    if (i > 0 && leavesBefore(last.at, lastPushed, this.items[p]!.at, this.pushed[p]!)) this.up(i, last, lastPushed);
    else this.down(i, last, lastPushed);
  }

  /** Moves the hole at `i` up past every parent that leaves after `entry`, then puts `entry` in it. */
  private up(i: number, entry: Deadline, pushed: number): void {
    const items = this.items;
    const order = this.pushed;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p]!;
      if (!leavesBefore(entry.at, pushed, parent.at, order[p]!)) break;
      items[i] = parent;
      order[i] = order[p]!;
      parent.heapIndex = i;
      i = p;
    }
    items[i] = entry;
    order[i] = pushed;
    entry.heapIndex = i;
  }

  /** Moves the hole at `i` down past every child that leaves before `entry`, then puts `entry` in it. */
  private down(i: number, entry: Deadline, pushed: number): void {
    const items = this.items;
    const order = this.pushed;
    const n = items.length;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && leavesBefore(items[c + 1]!.at, order[c + 1]!, items[c]!.at, order[c]!)) c++;
      const child = items[c]!;
      if (!leavesBefore(child.at, order[c]!, entry.at, pushed)) break;
      items[i] = child;
      order[i] = order[c]!;
      child.heapIndex = i;
      i = c;
    }
    items[i] = entry;
    order[i] = pushed;
    entry.heapIndex = i;
  }
}

/** The heap's order: earlier time first, and between equal times, earlier push first. */
function leavesBefore(at: number, pushed: number, otherAt: number, otherPushed: number): boolean {
  return at < otherAt || (at === otherAt && pushed < otherPushed);
}

/** Node clamps longer delays to 1 ms; longer deadlines re-arm. */
const MAX_DELAY = 2 ** 31 - 1;

/**
 * A {@link DeadlineHeap} driven by one Node timer, armed for the earliest
 * deadline and re-armed only when an earlier one arrives. Deadlines never
 * fire early. With no deadline left, no timer is held, so an idle backend
 * does not keep Node alive.
 *
 * @example
 * ```ts
 * const timers = new Timers();
 * timers.add({ at: performance.now() + 10, heapIndex: -1, fire: () => console.log("10 ms") });
 * ```
 * @throws TypeError from `add` when the entry is already in a heap.
 */
export class Timers {
  private readonly heap = new DeadlineHeap();
  private timer: NodeJS.Timeout | null = null;
  private armedAt = Infinity;
  private readonly onTimer = (): void => this.expire();

  /** How many deadlines are waiting. */
  get size(): number {
    return this.heap.size;
  }

  /** Whether a Node timer is armed. */
  get armed(): boolean {
    return this.timer !== null;
  }

  /** Adds a deadline (re-arming the Node timer when it is the earliest). */
  add(entry: Deadline): void {
    this.heap.push(entry);
    if (entry.at < this.armedAt || this.timer === null) this.arm();
  }

  /** Forgets a deadline; the Node timer is released when none is left. */
  remove(entry: Deadline): void {
    if (this.heap.remove(entry) && this.heap.size === 0) this.disarm();
  }

  /** Forgets every deadline and releases the Node timer. */
  clear(): void {
    this.heap.clear();
    this.disarm();
  }

  private expire(): void {
    this.timer = null;
    this.armedAt = Infinity;
    const heap = this.heap;
    const now = performance.now();
    for (let d = heap.peek(); d !== undefined && d.at <= now; d = heap.peek()) {
      heap.pop();
      d.fire();
    }
    if (heap.size !== 0) this.arm();
  }

  private arm(): void {
    const first = this.heap.peek();
    if (first === undefined) {
      this.disarm();
      return;
    }
    if (this.timer !== null) clearTimeout(this.timer);
    this.armedAt = first.at;
    if (first.at === Infinity) {
      // Forever: hold the loop with the longest timer Node has, re-armed when it fires.
      this.timer = setTimeout(this.onTimer, MAX_DELAY);
      return;
    }
    const delay = Math.min(MAX_DELAY, Math.max(0, Math.ceil(first.at - performance.now())));
    this.timer = setTimeout(this.onTimer, delay);
  }

  private disarm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedAt = Infinity;
  }
}
