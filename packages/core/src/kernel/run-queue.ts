/**
 * @internal A FIFO of tasks ready to run, on a growable power-of-two ring buffer: push
 * and shift are O(1) and allocate nothing once the ring has grown.
 */
export class RunQueue<T> {
  private ring: (T | undefined)[];
  private mask: number;
  private head = 0;
  private tail = 0;

  constructor(capacity = 64) {
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
    if (this.head === this.tail) return undefined;
    const item = this.ring[this.head];
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    return item;
  }

  /** The items, oldest first (a copy). */
  items(): T[] {
    const out: T[] = [];
    for (let i = this.head; i !== this.tail; i = (i + 1) & this.mask) out.push(this.ring[i]!);
    return out;
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
