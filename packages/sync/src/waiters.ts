/**
 * The machinery every primitive of this package shares: a FIFO of waiters
 * (an intrusive doubly linked list, so a cancelled waiter leaves it in O(1)),
 * and the operation a contended waiter runs, built on core's public `Trigger`.
 *
 * How a wait works: the primitive allocates a {@link WaitOp} (only when it
 * must wait: free fast paths allocate nothing), queues it, and hands it to the
 * caller's `yield*`. Its first `next()` parks the task on the op's trigger.
 * Whoever satisfies the waiter removes it from the queue, stores what the
 * waiter receives, and calls `trigger.signal()`:
 *
 * - `true`: the task will resume normally (core never replaces a pending
 *   resumption with a cancellation; `Cancelled` then arrives at the task's
 *   next suspension point), so the waiter now holds what it was given;
 * - `false`: the task was cancelled and detached from the trigger before it
 *   ran its cleanup: the giver takes its gift back and tries the next waiter.
 *
 * A cancelled waiter receives `Cancelled` through `throw`: the op leaves the
 * queue (if a giver has not already removed it) and rethrows, so nothing is
 * left behind.
 *
 * Internal to this package: each export carries its own `@internal` tag (a
 * tag in this header would strip the file's first statement from the published
 * declarations).
 */
import { type Instruction, type Operation, type Task, Trigger } from "@bobbin/core";

/** @internal The `done` result of operations that produce nothing. */
export const DONE: IteratorReturnResult<void> = { done: true, value: undefined };

/**
 * @internal An operation that completes at once with nothing: what a free
 * fast path returns, so that `yield*` on it allocates nothing.
 */
export const DONE_OP: Iterator<Instruction, void, unknown> & Operation<void> = {
  [Symbol.iterator]() {
    return this;
  },
  next() {
    return DONE;
  },
  throw(error: unknown): never {
    throw error;
  },
  return() {
    return DONE;
  },
};

/** @internal An operation that completes at once with `value`. */
export class Ready<T> implements Iterator<Instruction, T, unknown>, Operation<T> {
  constructor(private readonly value: T) {}

  [Symbol.iterator](): this {
    return this;
  }

  next(): IteratorResult<Instruction, T> {
    return { done: true, value: this.value };
  }

  throw(error: unknown): never {
    throw error;
  }

  return(value?: T): IteratorResult<Instruction, T> {
    return { done: true, value: value as T };
  }
}

/** @internal What a {@link WaitQueue} links: a waiter with its queue links. */
export interface Queued {
  before: Queued | null;
  after: Queued | null;
  /** The queue it is in, or null once removed. */
  queue: object | null;
}

/** @internal A FIFO of waiters; `size` is exact at every moment. */
export class WaitQueue<W extends Queued> {
  head: W | null = null;
  tail: W | null = null;
  size = 0;

  push(w: W): void {
    w.queue = this;
    w.before = this.tail;
    w.after = null;
    if (this.tail === null) this.head = w;
    else this.tail.after = w;
    this.tail = w;
    this.size++;
  }

  /** The oldest waiter, removed; `null` when empty. */
  shift(): W | null {
    const w = this.head;
    if (w !== null) this.unlink(w);
    return w;
  }

  /** Removes `w` if it is still queued here; returns whether it was. */
  remove(w: W): boolean {
    if (w.queue !== this) return false;
    this.unlink(w);
    return true;
  }

  private unlink(w: W): void {
    const before = w.before as W | null;
    const after = w.after as W | null;
    if (before === null) this.head = after;
    else before.after = after;
    if (after === null) this.tail = before;
    else after.before = before;
    w.before = w.after = null;
    w.queue = null;
    this.size--;
  }
}

/**
 * @internal One parked waiter and the operation its task runs. Subclasses say
 * what the waiter gets when woken (`woken`) and how it leaves when its wait is
 * abandoned (`left`, on cancellation).
 */
export abstract class WaitOp<T> implements Iterator<Instruction, T, unknown>, Operation<T>, Queued {
  /** @internal Queue links. */
  before: Queued | null = null;
  /** @internal */ after: Queued | null = null;
  /** @internal The queue it is in, or null once removed. */
  queue: object | null = null;
  /** @internal */ readonly trigger = new Trigger();
  private readonly waiting: Iterator<Instruction, void, unknown> = this.trigger.wait()[Symbol.iterator]();
  private started = false;

  constructor(/** @internal */ readonly task: Task<unknown>) {}

  [Symbol.iterator](): this {
    return this;
  }

  next(resumed?: unknown): IteratorResult<Instruction, T> {
    let r: IteratorResult<Instruction, void>;
    if (!this.started) {
      // The first call comes from `yield*` (always with undefined): park.
      this.started = true;
      r = this.waiting.next();
    } else r = this.waiting.next(resumed);
    return r.done === true ? this.woken() : r;
  }

  /** Cancellation arrives here (core throws `Cancelled` into the fiber, and `yield*` forwards it). */
  throw(error: unknown): IteratorResult<Instruction, T> {
    this.left();
    throw error;
  }

  return(value?: T): IteratorResult<Instruction, T> {
    this.left();
    return { done: true, value: value as T };
  }

  /** @internal The trigger was signalled: the waiter's result. */
  protected abstract woken(): IteratorResult<Instruction, T>;

  /** @internal The wait was abandoned (cancelled): leave the queue. */
  protected abstract left(): void;
}
