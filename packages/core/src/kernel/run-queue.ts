/**
 * @internal A FIFO on a growable power-of-two ring buffer: push and shift are
 * O(1) and allocate nothing once the ring has grown. A ring that grew for a
 * burst (a million tasks spawned at once) is given back as soon as it
 * empties, so that what the burst left (its tasks, once parked) is not
 * charged for it.
 */
export class RunQueue<T> {
  private ring: (T | undefined)[];
  private mask: number;
  private head = 0;
  private tail = 0;

  constructor(private readonly capacity = 64) {
    this.ring = new Array<T | undefined>(capacity);
    this.mask = capacity - 1;
  }

  get size(): number {
    return (this.tail - this.head) & this.mask;
  }

  isEmpty(): boolean {
    return this.head === this.tail;
  }

  push(item: T): void {
    this.ring[this.tail] = item;
    this.tail = (this.tail + 1) & this.mask;
    if (this.tail === this.head) this.grow();
  }

  /** The oldest item, or `undefined` when the queue is empty. */
  shift(): T | undefined {
    const head = this.head;
    if (head === this.tail) return undefined;
    const item = this.ring[head];
    this.ring[head] = undefined;
    const next = (head + 1) & this.mask;
    this.head = next;
    if (next === this.tail && this.mask !== this.capacity - 1) this.shrink();
    return item;
  }

  /** The items, oldest first (a copy). */
  items(): T[] {
    const out: T[] = [];
    for (let i = this.head; i !== this.tail; i = (i + 1) & this.mask) out.push(this.ring[i]!);
    return out;
  }

  private shrink(): void {
    this.ring = new Array<T | undefined>(this.capacity);
    this.mask = this.capacity - 1;
    this.head = 0;
    this.tail = 0;
  }

  private grow(): void {
    // The ring is full (tail caught up with head): unroll it into twice the space.
    const old = this.ring;
    const capacity = old.length;
    const ring = new Array<T | undefined>(capacity * 2);
    for (let i = 0; i < capacity; i++) ring[i] = old[(this.head + i) & this.mask];
    this.ring = ring;
    this.mask = capacity * 2 - 1;
    this.head = 0;
    this.tail = capacity;
  }
}
