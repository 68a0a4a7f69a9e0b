/**
 * A FIFO of values on a growable power-of-two ring: the buffer of channels
 * and broadcast subscriptions. Push and shift are O(1) and allocate nothing
 * once the ring has grown; it starts small, so a channel of large capacity
 * costs only what it holds.
 */

/** @internal See the file comment. */
export class Fifo<T> {
  private ring: (T | undefined)[] = new Array<T | undefined>(4);
  private head = 0;
  /** How many values it holds. */
  size = 0;

  push(value: T): void {
    if (this.size === this.ring.length) this.grow();
    this.ring[(this.head + this.size) & (this.ring.length - 1)] = value;
    this.size++;
  }

  /** The oldest value, removed (call only when `size > 0`). */
  shift(): T {
    const ring = this.ring;
    const value = ring[this.head] as T;
    ring[this.head] = undefined;
    this.head = (this.head + 1) & (ring.length - 1);
    this.size--;
    return value;
  }

  /** Drops every value. */
  clear(): void {
    this.ring = new Array<T | undefined>(4);
    this.head = 0;
    this.size = 0;
  }

  private grow(): void {
    const old = this.ring;
    const ring = new Array<T | undefined>(old.length * 2);
    for (let i = 0; i < this.size; i++) ring[i] = old[(this.head + i) & (old.length - 1)];
    this.ring = ring;
    this.head = 0;
  }
}
