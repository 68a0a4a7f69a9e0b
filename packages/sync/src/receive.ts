/**
 * The machinery that channels and broadcast subscriptions share: the waiters
 * in their queues, and the `recv()` operation.
 *
 * Two kinds of waiter stand in one queue. A task that waits in `yield*
 * ch.recv()` or `yield* ch.send(v)` is a {@link RecvWait} or a
 * {@link SendWait}: one object, woken directly, with no select machinery. A
 * select with a `recv()` or `send(v)` case is a {@link Waiting} holding the
 * select's `Choice`. Whoever has something for a waiter (a sender, a
 * receiver, a publisher, `close`) takes the oldest and hands it over; a waiter
 * that cannot take it any more (its select was decided elsewhere, or its task
 * left) says so, and it goes to the next one.
 *
 * The operation itself allocates only when it must wait: `[Symbol.iterator]`
 * (which `yield*` calls) completes at once through a reused iterator when an
 * item is there.
 */
import { type Instruction, self, type Task } from "@bobbin/core";
import { type Choice, SelectCase } from "@bobbin/core/lowlevel";
import { EMPTY } from "./end.js";
import { completed, completedIterator, DONE, type Queued, WaitOp, type WaitQueue } from "./waiters.js";

/** @internal A receiver in a source's queue. */
export interface Receiver<R> extends Queued {
  /** Hands it `item`; false when it cannot take one any more (the item stays the giver's). */
  give(item: R): boolean;
}

/** @internal A sender in a channel's queue, with its value. */
export interface Sender<T> extends Queued {
  readonly value: T;
  /** Its value is being taken: true if it lets go of it, false when it cannot any more (the value is not taken). */
  release(): boolean;
  /** The channel closed: the send fails with `error`. */
  fail(error: unknown): void;
}

/** @internal Something `recv()` reads from: a channel, a subscription. */
export interface Source<R> {
  /** The next item if there is one now (taking it), else `EMPTY`. */
  poll(): R | typeof EMPTY;
  /** Receivers waiting for an item. */
  readonly receivers: WaitQueue<Receiver<R>>;
}

/** @internal A select waiting on a channel, to receive or (with its value) to send. */
export class Waiting<V> implements Receiver<unknown>, Sender<V> {
  before: Queued | null = null;
  after: Queued | null = null;
  queue: object | null = null;

  constructor(
    readonly choice: Choice,
    readonly index: number,
    /** What a sender gives; nothing for a receiver. */
    readonly value: V,
  ) {}

  give(item: unknown): boolean {
    return this.choice.claim(this.index, item);
  }

  release(): boolean {
    return this.choice.claim(this.index, undefined);
  }

  fail(error: unknown): void {
    this.choice.fail(this.index, error);
  }
}

/** @internal A task waiting in `yield* recv()`: woken with the item it is given. */
export class RecvWait<R> extends WaitOp<R> implements Receiver<R> {
  private item: R | undefined = undefined;

  constructor(
    private readonly source: Source<R>,
    task: Task<unknown>,
  ) {
    super(task);
  }

  give(item: R): boolean {
    this.item = item;
    return this.wake();
  }

  protected resume(): IteratorResult<Instruction, R> {
    const item = this.item as R;
    this.item = undefined;
    return completed(item);
  }

  protected leave(): void {
    this.source.receivers.remove(this);
  }

  /** "receive on Channel#3" (a dump). */
  override describe(): string {
    return `receive on ${this.source}`;
  }
}

/** @internal Where a {@link SendWait} waits: a channel's queue of senders. */
export interface Destination<T> {
  readonly senders: WaitQueue<Sender<T>>;
}

/** @internal A task waiting in `yield* ch.send(v)`, with its value. */
export class SendWait<T> extends WaitOp<void> implements Sender<T> {
  constructor(
    private readonly destination: Destination<T>,
    task: Task<unknown>,
    readonly value: T,
  ) {
    super(task);
  }

  release(): boolean {
    return this.wake();
  }

  fail(error: unknown): void {
    this.wakeWithError(error);
  }

  protected resume(): IteratorResult<Instruction, void> {
    return DONE;
  }

  protected leave(): void {
    this.destination.senders.remove(this);
  }

  /** "send on Channel#3" (a dump). */
  override describe(): string {
    return `send on ${this.destination}`;
  }
}

/** @internal Hands `item` to the oldest waiting receiver that can still take it; says whether one took it. */
export function handToReceiver<R>(receivers: WaitQueue<Receiver<R>>, item: R): boolean {
  for (let w = receivers.shift(); w !== null; w = receivers.shift()) {
    if (w.give(item)) return true;
  }
  return false;
}

/** @internal Every waiting receiver gets `item` (the end of the stream). */
export function endReceivers<R>(receivers: WaitQueue<Receiver<R>>, item: R): void {
  for (let w = receivers.shift(); w !== null; w = receivers.shift()) w.give(item);
}

/**
 * @internal The `recv()` of a source: one object per source, which every
 * receive uses (it holds nothing of any one of them). On its own (`yield*`)
 * it takes an item at once, or parks a {@link RecvWait}; in a select, it is a
 * case.
 */
export class Receive<R> extends SelectCase<R, Waiting<undefined>> {
  constructor(private readonly source: Source<R>) {
    super();
  }

  override [Symbol.iterator](): Iterator<Instruction, R, unknown> {
    const item = this.source.poll();
    if (item !== EMPTY) return completedIterator(item);
    const w = new RecvWait(this.source, self("recv()"));
    this.source.receivers.push(w);
    return w;
  }

  override describe(): string {
    return `receive on ${this.source}`;
  }

  offer(choice: Choice, index: number): void {
    const item = this.source.poll();
    if (item !== EMPTY) choice.claim(index, item);
  }

  enlist(choice: Choice, index: number): Waiting<undefined> {
    const w = new Waiting(choice, index, undefined);
    this.source.receivers.push(w);
    return w;
  }

  withdraw(w: Waiting<undefined>): void {
    this.source.receivers.remove(w);
  }
}
