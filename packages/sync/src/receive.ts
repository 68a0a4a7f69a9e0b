/**
 * The receiving side that channels and broadcast subscriptions share: the
 * queue of selects waiting to receive, and the `recv()` case.
 *
 * A waiting receiver is a node of the queue holding its select's `Choice`.
 * Whoever has a value for it (a sender, a publisher, `close`) takes the
 * oldest node and claims its choice; a claim that fails means that select was
 * decided elsewhere, or its task left, so the value goes to the next node.
 */
import { type Choice, SelectCase } from "@bobbin/core";
import type { Queued, WaitQueue } from "./waiters.js";

/** @internal The end of a stream (one frozen object). */
export const ENDED: { readonly done: true } = Object.freeze({ done: true });

/** @internal A select waiting on a channel, to receive or (with its value) to send. */
export class Waiting<V> implements Queued {
  before: Queued | null = null;
  after: Queued | null = null;
  queue: object | null = null;

  constructor(
    readonly choice: Choice,
    readonly index: number,
    /** What a sender gives; nothing for a receiver. */
    public value: V,
  ) {}
}

/** @internal Something `recv()` reads from: a channel, a subscription. */
export interface Source<R> {
  /** The next item if there is one now (taking it), else `undefined`. */
  tryRecv(): R | undefined;
  /** Selects waiting to receive. */
  readonly receivers: WaitQueue<Waiting<undefined>>;
}

/** @internal Hands `item` to the oldest waiting receiver whose select is still open; says whether one took it. */
export function handToReceiver<R>(receivers: WaitQueue<Waiting<undefined>>, item: R): boolean {
  for (let w = receivers.shift(); w !== null; w = receivers.shift()) {
    if (w.choice.claim(w.index, item)) return true;
  }
  return false;
}

/** @internal Every waiting receiver gets `item` (the end of the stream). */
export function endReceivers<R>(receivers: WaitQueue<Waiting<undefined>>, item: R): void {
  for (let w = receivers.shift(); w !== null; w = receivers.shift()) w.choice.claim(w.index, item);
}

/** @internal The `recv()` case of a source. */
export class Receive<R> extends SelectCase<R, Waiting<undefined>> {
  constructor(private readonly source: Source<R>) {
    super();
  }

  override describe(): string {
    return `receive on ${this.source}`;
  }

  offer(choice: Choice, index: number): void {
    const item = this.source.tryRecv();
    if (item !== undefined) choice.claim(index, item);
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
