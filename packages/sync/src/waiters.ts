/**
 * The machinery every primitive of this package shares: a FIFO of waiters
 * (an intrusive doubly linked list, so a cancelled waiter leaves it in O(1)),
 * and the operation a contended waiter runs, built on core's `Suspender`.
 *
 * How a wait works: the primitive allocates a {@link WaitOp} (only when it
 * must wait: free fast paths allocate nothing), queues it, and hands it to the
 * caller's `yield*`, which parks the task on it. Whoever satisfies the waiter
 * removes it from the queue, stores what the waiter receives, and calls
 * `wake()`:
 *
 * - `true`: the task will resume normally (core never replaces a pending
 *   resumption with a cancellation; `Cancelled` then arrives at the task's
 *   next suspension point), so the waiter now holds what it was given;
 * - `false`: the task was cancelled and left already: the giver takes its
 *   gift back and tries the next waiter.
 *
 * When a waiting task is cancelled, core runs the op's `leave()` at once: it
 * leaves the queue (if a giver has not already removed it), so nothing is
 * left behind.
 *
 * Internal to this package: each export carries its own `@internal` tag (a
 * tag in this header would strip the file's first statement from the published
 * declarations).
 */
import type { Instruction, Task } from "@bobbin/core";
import { Suspender } from "@bobbin/core/lowlevel";

let lastSerial = 0;

/** @internal A number naming a primitive in diagnostics (`Mutex#3`), unique in its thread. */
export function nextSerial(): number {
  return ++lastSerial;
}

/** @internal The `done` result of operations that produce nothing. */
export const DONE: IteratorReturnResult<void> = { done: true, value: undefined };

/** What `yield*` reads from an operation that completed with a value: one object, reused, since `yield*` reads it at once. */
const COMPLETED: IteratorReturnResult<unknown> = { done: true, value: undefined };
const COMPLETED_ITERATOR: Iterator<Instruction, unknown, unknown> = { next: () => COMPLETED };

/** @internal The result that ends an operation with `value`, without allocating: return it to `yield*`, which reads it at once. */
export function completed<T>(value: T): IteratorReturnResult<T> {
  COMPLETED.value = value;
  return COMPLETED as IteratorReturnResult<T>;
}

/** @internal An iterator that completes at once with `value` (the fast path of an operation), without allocating. */
export function completedIterator<T>(value: T): Iterator<Instruction, T, unknown> {
  COMPLETED.value = value;
  return COMPLETED_ITERATOR as Iterator<Instruction, T, unknown>;
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
 * @internal One parked waiter and the operation its task runs: a core
 * `Suspender` that its primitive queued before the task's `yield*` parks it.
 * Subclasses say what the waiter gets when woken (`resume`) and how it leaves
 * when its wait is abandoned (`leave`, at the moment of the cancellation).
 */
export abstract class WaitOp<T> extends Suspender<T> implements Queued {
  /** @internal Queue links. */
  before: Queued | null = null;
  /** @internal */ after: Queued | null = null;
  /** @internal The queue it is in, or null once removed. */
  queue: object | null = null;

  constructor(/** @internal */ readonly task: Task<unknown>) {
    super();
  }

  /** @internal The primitive queued the waiter already: park. */
  protected start(): IteratorResult<Instruction, T> {
    return this.suspend();
  }
}
