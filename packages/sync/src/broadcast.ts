/**
 * `Broadcast`: every subscriber receives every value published after it
 * subscribed. Publishing never waits, so a slow subscriber cannot hold up the
 * publisher or the others: each subscription buffers up to `capacity` values,
 * and when it is full the oldest is dropped and counted; the next value the
 * subscriber receives says how many it missed just before it (`missed`).
 */
import { describe, type SelectCase } from "@bobbin/core/lowlevel";
import { EMPTY } from "./end.js";
import { ChannelClosed } from "./errors.js";
import { Fifo } from "./fifo.js";
import { endReceivers, handToReceiver, Receive, type Receiver } from "./receive.js";
import { keepLocal } from "./shared/portable.js";
import { nextSerial, WaitQueue } from "./waiters.js";

/**
 * What a subscriber receives: a value and how many values it missed just
 * before it (dropped because its buffer was full), or the end.
 *
 * @example
 * ```ts
 * const r: BroadcastReceived<string> = yield* sub.recv();
 * if (!r.done && r.missed > 0) console.warn(`lost ${r.missed} messages`);
 * ```
 */
export type BroadcastReceived<T> = { readonly done: false; readonly value: T; readonly missed: number } | { readonly done: true };

/** The end of a subscription (one frozen object). */
const ENDED: { readonly done: true } = Object.freeze({ done: true });

/**
 * One subscriber's view of a {@link Broadcast}: the values published since
 * it subscribed, in order, buffered up to the broadcast's capacity. Read them
 * with `yield* sub.recv()` (a select case too); stop with `close()` or `using`.
 *
 * @example
 * ```ts
 * using sub = news.subscribe();
 * for (let r = yield* sub.recv(); !r.done; r = yield* sub.recv()) yield* show(r.value);
 * ```
 * @throws Cancelled from a `recv` cancelled while waiting; TypeError when it would wait outside a task.
 */
export class Subscription<T> implements Disposable {
  /** @internal */ private readonly buffer = new Fifo<T>();
  /** @internal Values dropped just before the oldest one buffered. */
  private gap = 0;
  /** @internal */ private totalMissed = 0;
  /** @internal */ private ended = false;
  /** @internal Tasks and selects waiting to receive. */
  readonly receivers = new WaitQueue<Receiver<BroadcastReceived<T>>>();
  /** @internal The operation every `recv()` returns. */
  private readonly receive: Receive<BroadcastReceived<T>> = new Receive<BroadcastReceived<T>>(this);

  /** @internal */
  constructor(
    private readonly broadcast: Broadcast<T>,
    private readonly capacity: number,
  ) {}

  /** "a subscription to Broadcast#2", as diagnostics name it. */
  toString(): string {
    return `a subscription to ${this.broadcast}`;
  }

  /** How many values wait to be received. */
  get size(): number {
    return this.buffer.size;
  }

  /** How many values this subscriber has missed in all (dropped because its buffer was full). */
  get missed(): number {
    return this.totalMissed;
  }

  /** Whether the subscription has ended (closed, or its broadcast closed); what is buffered can still be received. */
  get isClosed(): boolean {
    return this.ended;
  }

  /**
   * Receives the next value: `{ done: false, value, missed }`; waits while
   * there is none; `{ done: true }` once the broadcast (or the subscription)
   * is closed and the buffered values were received. The same operation
   * every time: a select case, and an operation on its own.
   *
   * @example
   * ```ts
   * const r = yield* sub.recv();
   * ```
   * @throws Cancelled when the task is cancelled while waiting (it took nothing).
   * @throws TypeError (from `yield*`) when it would wait outside a task.
   */
  recv(): SelectCase<BroadcastReceived<T>> {
    return this.receive;
  }

  /**
   * The next value if there is one; `{ done: true }` once ended and drained;
   * `undefined` when a receive would wait.
   *
   * @example
   * ```ts
   * for (let r = sub.tryRecv(); r !== undefined && !r.done; r = sub.tryRecv()) log(r.value);
   * ```
   */
  tryRecv(): BroadcastReceived<T> | undefined {
    const r = this.poll();
    return r === EMPTY ? undefined : r;
  }

  /** @internal What `recv()` takes at once: the next value, the end, or `EMPTY`. */
  poll(): BroadcastReceived<T> | typeof EMPTY {
    if (this.buffer.size !== 0) {
      const missed = this.gap;
      this.gap = 0;
      return { done: false, value: this.buffer.shift(), missed };
    }
    return this.ended ? ENDED : EMPTY;
  }

  /**
   * Unsubscribes: no more values arrive, the buffered ones are dropped, and
   * waiting receivers get `{ done: true }`. Closing twice does nothing.
   *
   * @example
   * ```ts
   * const sub = news.subscribe();
   * try { … } finally { sub.close(); }
   * ```
   */
  close(): void {
    this.buffer.clear();
    this.gap = 0;
    this.broadcast.unsubscribe(this);
    this.end();
  }

  /** Unsubscribes at the end of a `using` block. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** @internal A published value: to a waiting receiver, or into the buffer (dropping the oldest when full). */
  deliver(value: T): void {
    if (this.receivers.size !== 0 && handToReceiver(this.receivers, { done: false, value, missed: 0 })) return;
    if (this.buffer.size >= this.capacity) {
      this.buffer.shift();
      this.gap++;
      this.totalMissed++;
    }
    this.buffer.push(value);
  }

  /** @internal No more values will arrive. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    endReceivers(this.receivers, ENDED);
  }
}

/**
 * A one-to-many channel: `publish(v)` gives `v` to every current subscriber,
 * and never waits. Each subscription buffers up to `capacity` values; when a
 * slow subscriber's buffer is full, its oldest value is dropped and the
 * subscriber learns it from the `missed` count of the next value it receives
 * — the publisher and the other subscribers are never held up. With
 * `capacity = Infinity` nothing is dropped (and a stalled subscriber's buffer
 * grows without bound). A broadcast belongs to its domain.
 *
 * @example
 * ```ts
 * const room = new Broadcast<string>(64);
 * const sub = room.subscribe();
 * room.publish("hello");
 * (yield* sub.recv());   // { done: false, value: "hello", missed: 0 }
 * room.close();
 * (yield* sub.recv());   // { done: true }
 * ```
 * @throws RangeError when `capacity` is not an integer ≥ 1 or `Infinity`.
 */
export class Broadcast<T> {
  /** How many values each subscription buffers. */
  readonly capacity: number;
  /** @internal */ private readonly subscriptions = new Set<Subscription<T>>();
  /** @internal */ private closed = false;
  private readonly serial = nextSerial();

  constructor(capacity: number) {
    if (capacity !== Number.POSITIVE_INFINITY && !(Number.isInteger(capacity) && capacity >= 1)) {
      throw new RangeError(
        `Broadcast(capacity) expects an integer ≥ 1 (values kept per subscriber) or Infinity, got ${describe(capacity)}`,
      );
    }
    this.capacity = capacity;
  }

  /** `Broadcast#n`, as diagnostics name it. */
  toString(): string {
    return `Broadcast#${this.serial}`;
  }

  /** How many subscriptions are open. */
  get subscribers(): number {
    return this.subscriptions.size;
  }

  /** Whether `close()` was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * A new subscription, which receives every value published from now on.
   * Subscribing to a closed broadcast gives one that has ended.
   *
   * @example
   * ```ts
   * using sub = room.subscribe();
   * ```
   */
  subscribe(): Subscription<T> {
    const sub = new Subscription<T>(this, this.capacity);
    if (this.closed) sub.end();
    else this.subscriptions.add(sub);
    return sub;
  }

  /**
   * Gives `value` to every subscriber; never waits. Returns how many
   * subscribers it reached. Callable from plain callbacks.
   *
   * @example
   * ```ts
   * room.publish(`${name} joined`);
   * ```
   * @throws ChannelClosed when the broadcast is closed.
   */
  publish(value: T): number {
    if (this.closed) throw new ChannelClosed("broadcast");
    for (const sub of this.subscriptions) sub.deliver(value);
    return this.subscriptions.size;
  }

  /**
   * Closes the broadcast: no more values; each subscriber receives what it
   * has buffered, then `{ done: true }`. Returns whether this call closed it.
   *
   * @example
   * ```ts
   * room.close();
   * ```
   */
  close(): boolean {
    if (this.closed) return false;
    this.closed = true;
    for (const sub of this.subscriptions) sub.end();
    this.subscriptions.clear();
    return true;
  }

  /** @internal */
  unsubscribe(sub: Subscription<T>): void {
    this.subscriptions.delete(sub);
  }
}

keepLocal("Broadcast", Broadcast, "create it in the domain that uses it, and pass values to parallel tasks as arguments and results");
keepLocal("Subscription", Subscription, "subscribe in the domain that reads it");
