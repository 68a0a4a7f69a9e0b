import type * as B from "@bobbin/core";
import { Condition, Mutex } from "../src/index.js";

/** The classic bounded buffer: one Mutex, two Conditions. */
export class BoundedBuffer<T> {
  private readonly items: T[] = [];
  private readonly m = new Mutex();
  private readonly notFull = new Condition();
  private readonly notEmpty = new Condition();

  constructor(private readonly capacity: number) {}

  /** What was put and taken, in the order it happened (inside the critical section). */
  readonly putLog: T[] = [];
  readonly takeLog: T[] = [];
  maxSize = 0;

  put(item: T): B.Operation<void> {
    return this.m.protect(
      function* (this: BoundedBuffer<T>) {
        while (this.items.length === this.capacity) yield* this.notFull.wait(this.m);
        this.items.push(item);
        this.putLog.push(item);
        this.maxSize = Math.max(this.maxSize, this.items.length);
        this.notEmpty.signal();
      }.bind(this),
    );
  }

  take(): B.Operation<T> {
    return this.m.protect(
      function* (this: BoundedBuffer<T>) {
        while (this.items.length === 0) yield* this.notEmpty.wait(this.m);
        const item = this.items.shift()!;
        this.takeLog.push(item);
        this.notFull.signal();
        return item;
      }.bind(this),
    );
  }

  get leftovers(): { items: number; locked: boolean; waiters: number } {
    return {
      items: this.items.length,
      locked: this.m.isLocked,
      waiters: this.m.waiters + this.notFull.waiters + this.notEmpty.waiters,
    };
  }
}
