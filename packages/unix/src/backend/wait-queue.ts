/**
 * Where parked operations wait: a queue per side of a socket (its writers,
 * its closes…; its readers wait in the socket record itself, see
 * `ReceiveQueue`), first in, first woken. An operation joins
 * it in `wait`, leaves it in `leave`; the backend wakes the first (some
 * readiness for one) or all of them (the socket closed, the stream ended).
 */
import type { ParkedBase } from "./parked.js";

/**
 * Holds a handle of Node's loop while operations are parked, and only then
 * (`ref` at the first, `unref` after the last): a backend whose readiness
 * comes through one handle of its own (a poller, a ring) keeps Node alive
 * only while a task waits on it, so that a run whose tasks wait on nothing
 * the backend can wake still ends in `Deadlock`. Give it to the backend's
 * wait queues.
 *
 * @example
 * ```ts
 * const parked = new ParkedCount(poller);          // unreferenced at first
 * const readers = new WaitQueue(parked);
 * readers.add(op);                                  // poller.ref()
 * readers.wakeFirst();                              // poller.unref()
 * ```
 * @throws never
 */
export class ParkedCount {
  #parked = 0;
  readonly #handle: { ref(): void; unref(): void };

  /** @param handle what holds Node's loop (its `ref`/`unref` must do nothing once the handle is destroyed). */
  constructor(handle: { ref(): void; unref(): void }) {
    this.#handle = handle;
  }

  /** How many operations are parked. */
  get count(): number {
    return this.#parked;
  }

  /** An operation parks. */
  parked(): void {
    if (this.#parked++ === 0) this.#handle.ref();
  }

  /** A parked operation was woken or left. */
  left(): void {
    if (--this.#parked === 0) this.#handle.unref();
  }
}

/**
 * The operations parked on one side of a socket, in the order they came.
 * An operation is in a queue from its `wait` until it is woken (taken off
 * by `wakeFirst`/`wakeAll`/`take`) or leaves (`leave`).
 *
 * @example
 * ```ts
 * readonly writers = new WaitQueue();
 * // WriteOp: wait() { sock.writers.add(this) }   leave() { sock.writers.leave(this) }
 * // a Node callback: the socket is writable again: sock.writers.wakeFirst();
 * // closing: sock.writers.wakeAll();             // each attempt throws SocketClosed
 * ```
 * @throws never
 */
export class WaitQueue<W extends ParkedBase<unknown> = ParkedBase<unknown>> {
  // Its helpers are TypeScript-private, not `#` methods: a class with `#`
  // methods gives each instance a brand field, a word every idle socket's
  // queue would pay.
  // Most queues hold one waiter or none: the first is kept inline, and an
  // array is made only for a second one (an idle socket holds no array).
  #first: W | undefined = undefined;
  /** The waiters after the first, in order. */
  #rest: W[] | null = null;
  readonly #count: ParkedCount | null;

  /** @param count counts the operations parked here with those of the backend's other queues. */
  constructor(count: ParkedCount | null = null) {
    this.#count = count;
  }

  /** How many operations wait. */
  get length(): number {
    return this.#first === undefined ? 0 : 1 + (this.#rest?.length ?? 0);
  }

  /** The operation that waits longest, if any. */
  get first(): W | undefined {
    return this.#first;
  }

  /** Parks `op` at the end. */
  add(op: W): void {
    this.append(op);
    if (this.#count !== null) this.#count.parked();
  }

  /** Parks `op` at the head, before those that wait longer (it had its turn, and waits again in it). */
  addFirst(op: W): void {
    const first = this.#first;
    if (first !== undefined) (this.#rest ??= []).unshift(first);
    this.#first = op;
    if (this.#count !== null) this.#count.parked();
  }

  /** `op` leaves without being woken (its task was cancelled or interrupted); returns whether it was here. */
  leave(op: W): boolean {
    if (this.#first === op) this.shiftFirst();
    else {
      const rest = this.#rest;
      const i = rest === null ? -1 : rest.indexOf(op);
      if (i < 0) return false;
      rest!.splice(i, 1);
    }
    if (this.#count !== null) this.#count.left();
    return true;
  }

  /** Takes the first operation off without waking it (the caller hands it something, then calls its `ready()`). */
  take(): W | undefined {
    const op = this.#first;
    if (op === undefined) return undefined;
    this.shiftFirst();
    if (this.#count !== null) this.#count.left();
    return op;
  }

  /** Wakes the operation that waits longest; false when none waits. */
  wakeFirst(): boolean {
    const op = this.take();
    if (op === undefined) return false;
    op.ready();
    return true;
  }

  /** Wakes every operation (each attempts again and sees why: closed, ended, shut down). */
  wakeAll(): void {
    while (this.#first !== undefined) this.take()!.ready();
  }

  /** Wakes the operations `which` selects, and keeps the others in order. */
  wakeWhere(which: (op: W) => boolean): void {
    const first = this.#first;
    if (first === undefined) return;
    const rest = this.#rest;
    this.#first = undefined;
    this.#rest = null;
    this.wakeOrKeep(first, which);
    if (rest !== null) for (const op of rest) this.wakeOrKeep(op, which);
  }

  /** @internal */
  private wakeOrKeep(op: W, which: (op: W) => boolean): void {
    if (!which(op)) {
      this.append(op);
      return;
    }
    if (this.#count !== null) this.#count.left();
    op.ready();
  }

  /** @internal */
  private append(op: W): void {
    if (this.#first === undefined) this.#first = op;
    else (this.#rest ??= []).push(op);
  }

  /** @internal The first leaves: the next one (if any) is first. */
  private shiftFirst(): void {
    const rest = this.#rest;
    this.#first = rest !== null && rest.length !== 0 ? rest.shift() : undefined;
  }
}
