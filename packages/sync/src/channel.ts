/**
 * `Channel`: a FIFO of values between tasks, with a capacity (0: rendezvous),
 * that can be closed. `send` and `recv` are select cases: on their own they
 * are operations, and in `B.select` they are choices that have no effect when
 * they lose.
 *
 * Invariants: receivers wait only while the buffer is empty, and senders only
 * while it is full (for a rendezvous channel: always, until a receiver comes).
 */
import { type Choice, describe, type Received, SelectCase } from "@bobbin/core";
import { ChannelClosed } from "./errors.js";
import { Fifo } from "./fifo.js";
import { ENDED, endReceivers, handToReceiver, Receive, Waiting } from "./receive.js";
import { keepLocal } from "./shared/portable.js";
import { nextSerial, WaitQueue } from "./waiters.js";

/** A `send` of one value: delivered to a receiver, into the buffer, or waiting for room. */
class Send<T> extends SelectCase<void, Waiting<T>> {
  constructor(
    private readonly channel: Channel<T>,
    private readonly value: T,
  ) {
    super();
  }

  override describe(): string {
    return `send on ${this.channel}`;
  }

  offer(choice: Choice, index: number): void {
    if (this.channel.isClosed) choice.fail(index, new ChannelClosed());
    else if (this.channel.trySend(this.value)) choice.claim(index, undefined);
  }

  enlist(choice: Choice, index: number): Waiting<T> {
    const w = new Waiting(choice, index, this.value);
    this.channel.senders.push(w);
    return w;
  }

  withdraw(w: Waiting<T>): void {
    this.channel.senders.remove(w);
  }
}

/**
 * A channel: values sent by tasks are received by tasks, in order, each value
 * by one receiver. `capacity` is how many values it holds while nobody
 * receives: `0` (the default) makes every send wait for a receiver (a
 * rendezvous), `Infinity` never makes a send wait.
 *
 * - `yield* ch.send(v)` waits while the channel is full; `yield* ch.recv()`
 *   waits while it is empty, and evaluates to `{ done: false, value }`, or
 *   `{ done: true }` once the channel is closed and every value was received.
 * - Both are select cases: `yield* B.select([ch.recv(), other.send(v),
 *   B.timeout(100)])` — a send that loses delivers nothing, a receive that
 *   loses takes nothing.
 * - Fair: waiting senders and receivers are served in FIFO order.
 * - Cancellation-safe: a cancelled send delivered nothing, a cancelled
 *   receive took nothing; a task woken with a value keeps it (`Cancelled`
 *   comes at its next wait).
 * - `close()` ends it: receivers get what is buffered, then `{ done: true }`;
 *   a send on a closed channel throws `ChannelClosed` (senders waiting when it
 *   closes too). A channel belongs to its domain.
 *
 * @example
 * ```ts
 * const jobs = new Channel<string>(16);
 * const worker = B.spawn(function* () {
 *   for (let r = yield* jobs.recv(); !r.done; r = yield* jobs.recv()) yield* handle(r.value);
 * });
 * for (const url of urls) yield* jobs.send(url);
 * jobs.close();
 * yield* B.awaitExn(worker);
 * ```
 * @throws RangeError when `capacity` is not an integer ≥ 0 or `Infinity`.
 */
export class Channel<T> {
  /** How many values it holds while nobody receives. */
  readonly capacity: number;
  /** @internal */ private readonly buffer = new Fifo<T>();
  /** @internal Selects waiting to send, with their values. */
  readonly senders = new WaitQueue<Waiting<T>>();
  /** @internal Selects waiting to receive. */
  readonly receivers = new WaitQueue<Waiting<undefined>>();
  /** @internal */ private closed = false;
  private readonly serial = nextSerial();

  /** `Channel#n`, as diagnostics name it. */
  toString(): string {
    return `Channel#${this.serial}`;
  }

  constructor(capacity = 0) {
    if (capacity !== Number.POSITIVE_INFINITY && !(Number.isInteger(capacity) && capacity >= 0)) {
      throw new RangeError(
        `Channel(capacity) expects an integer ≥ 0 (0: every send waits for a receiver) or Infinity, got ${describe(capacity)}`,
      );
    }
    this.capacity = capacity;
  }

  /** How many values wait in the channel to be received. */
  get size(): number {
    return this.buffer.size;
  }

  /** Whether `close()` was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** How many selects wait to send and to receive (one that has just been decided elsewhere counts until its task resumes). */
  get waiters(): { readonly senders: number; readonly receivers: number } {
    return { senders: this.senders.size, receivers: this.receivers.size };
  }

  /**
   * Sends `value`: to the oldest waiting receiver, or into the buffer; waits
   * (FIFO) while the channel is full. A select case, and an operation on its own.
   *
   * @example
   * ```ts
   * yield* ch.send(42);
   * ```
   * @throws ChannelClosed when the channel is closed, or closes while the send waits (the value was not delivered).
   * @throws Cancelled when the task is cancelled while waiting (the value was not delivered).
   */
  send(value: T): SelectCase<void> {
    return new Send(this, value);
  }

  /**
   * Receives the oldest value: `{ done: false, value }`; waits (FIFO) while
   * the channel is empty; `{ done: true }` once it is closed and drained. A
   * select case, and an operation on its own.
   *
   * @example
   * ```ts
   * for (let r = yield* ch.recv(); !r.done; r = yield* ch.recv()) console.log(r.value);
   * ```
   * @throws Cancelled when the task is cancelled while waiting (it took nothing).
   */
  recv(): SelectCase<Received<T>> {
    return new Receive<Received<T>>(this);
  }

  /**
   * Sends `value` if that needs no wait (a receiver is waiting, or there is
   * room); returns whether it did. Callable from plain callbacks.
   *
   * @example
   * ```ts
   * if (!events.trySend(e)) dropped++;
   * ```
   * @throws ChannelClosed when the channel is closed.
   */
  trySend(value: T): boolean {
    if (this.closed) throw new ChannelClosed();
    if (this.receivers.size !== 0 && handToReceiver(this.receivers, { done: false, value })) return true;
    if (this.buffer.size >= this.capacity) return false;
    this.buffer.push(value);
    return true;
  }

  /**
   * Receives a value if one is there (buffered, or offered by a waiting
   * sender); `{ done: true }` once the channel is closed and drained;
   * `undefined` when a receive would wait. Callable from plain callbacks.
   *
   * @example
   * ```ts
   * const r = ch.tryRecv();
   * if (r !== undefined && !r.done) use(r.value);
   * ```
   */
  tryRecv(): Received<T> | undefined {
    if (this.buffer.size !== 0) {
      const value = this.buffer.shift();
      // Room was made: the oldest waiting sender's value takes it.
      for (let w = this.senders.shift(); w !== null; w = this.senders.shift()) {
        if (w.choice.claim(w.index, undefined)) {
          this.buffer.push(w.value);
          break;
        }
      }
      return { done: false, value };
    }
    for (let w = this.senders.shift(); w !== null; w = this.senders.shift()) {
      if (w.choice.claim(w.index, undefined)) return { done: false, value: w.value };
    }
    return this.closed ? ENDED : undefined;
  }

  /**
   * Closes the channel: no more sends (they throw `ChannelClosed`, and so do
   * the sends waiting now); receivers get the buffered values, then
   * `{ done: true }`. Returns whether this call closed it (false: it was closed).
   *
   * @example
   * ```ts
   * try { for (const x of xs) yield* ch.send(x); } finally { ch.close(); }
   * ```
   */
  close(): boolean {
    if (this.closed) return false;
    this.closed = true;
    endReceivers(this.receivers, ENDED);
    for (let w = this.senders.shift(); w !== null; w = this.senders.shift()) w.choice.fail(w.index, new ChannelClosed());
    return true;
  }
}

keepLocal("Channel", Channel, "create it in the domain that uses it, and pass values to parallel tasks as arguments and results");
