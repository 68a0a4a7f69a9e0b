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
    const i = this.items.length;
    this.items.push(entry);
    this.pushed.push(this.pushes++);
    this.up(i);
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

  private removeAt(i: number): void {
    const items = this.items;
    const entry = items[i]!;
    const last = items.pop()!;
    const lastPushed = this.pushed.pop()!;
    entry.heapIndex = -1;
    if (last === entry) return;
    this.place(last, lastPushed, i);
    this.down(i);
    this.up(last.heapIndex);
  }

  /** Whether the entry at `i` leaves before the one at `j`. */
  private before(i: number, j: number): boolean {
    const a = this.items[i]!.at;
    const b = this.items[j]!.at;
    return a < b || (a === b && this.pushed[i]! < this.pushed[j]!);
  }

  private place(entry: Deadline, pushed: number, i: number): void {
    this.items[i] = entry;
    this.pushed[i] = pushed;
    entry.heapIndex = i;
  }

  private swap(i: number, j: number): void {
    const entry = this.items[i]!;
    const pushed = this.pushed[i]!;
    this.place(this.items[j]!, this.pushed[j]!, i);
    this.place(entry, pushed, j);
  }

  private up(i: number): void {
    this.items[i]!.heapIndex = i;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }

  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && this.before(c + 1, c)) c++;
      if (!this.before(c, i)) break;
      this.swap(i, c);
      i = c;
    }
  }
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
