/**
 * `Channel`: a FIFO of values between tasks, with a capacity (0: rendezvous),
 * that can be closed. `send` and `recv` are select cases: on their own they
 * are operations, and in `B.select` they are choices that have no effect when
 * they lose.
 *
 * Invariants: receivers wait only while the buffer is empty, and senders only
 * while it is full (for a rendezvous channel: always, until a receiver comes).
 */
import { type Instruction, self } from "@bobbin/core";
import { type Choice, describe, keepShapes, SelectCase } from "@bobbin/core/lowlevel";
import { EMPTY, END } from "./end.js";
import { ChannelClosed } from "./errors.js";
import { Fifo } from "./fifo.js";
import { endReceivers, handToReceiver, Receive, type Receiver, RecvWait, type Sender, SendWait, Waiting } from "./receive.js";
import { keepLocal } from "./shared/portable.js";
import { completedIterator, nextSerial, WaitQueue } from "./waiters.js";

/**
 * A `send` of one value: on its own (`yield*`) it delivers the value at once
 * or parks a `SendWait`; in a select it is a case. Used once (see
 * `Channel.send`): its channel hands the same object out again afterwards, so
 * a send allocates nothing.
 */
class Send<T> extends SelectCase<void, Waiting<T>> {
  /** Made by `send(v)` and not used yet. */
  armed = true;

  constructor(
    private readonly channel: Channel<T>,
    private value: T,
  ) {
    super();
  }

  /** Makes it the send of `value` again (its last use is over). */
  arm(value: T): void {
    this.value = value;
    this.armed = true;
  }

  override [Symbol.iterator](): Iterator<Instruction, void, unknown> {
    const value = this.use();
    this.value = undefined as T;
    return this.channel.startSend(value);
  }

  override describe(): string {
    return `send on ${this.channel}`;
  }

  offer(choice: Choice, index: number): void {
    const channel = this.channel;
    this.use();
    if (channel.isClosed) choice.fail(index, new ChannelClosed());
    else if (channel.put(this.value)) choice.claim(index, undefined);
    else return; // enlist may come next, in this step, and take the value; if a later case wins first, the channel's next send(v) replaces it
    this.value = undefined as T;
  }

  enlist(choice: Choice, index: number): Waiting<T> {
    const w = new Waiting(choice, index, this.value);
    this.value = undefined as T;
    this.channel.senders.push(w);
    return w;
  }

  withdraw(w: Waiting<T>): void {
    this.channel.senders.remove(w);
  }

  /** Marks it used and returns its value (which the caller then lets go of: a used send keeps nothing). */
  private use(): T {
    if (!this.armed) {
      throw new TypeError(
        `an operation made by ${this.channel}.send(v) was used again: each send(v) makes one send — yield* it, or put it in one select, once; call send(v) again to send again`,
      );
    }
    this.armed = false;
    return this.value;
  }
}

/**
 * A channel: values sent by tasks are received by tasks, in order, each value
 * by one receiver. `capacity` is how many values it holds while nobody
 * receives: `0` (the default) makes every send wait for a receiver (a
 * rendezvous), `Infinity` never makes a send wait.
 *
 * - `yield* ch.send(v)` waits while the channel is full; `yield* ch.recv()`
 *   waits while it is empty and evaluates to the value, or to {@link END}
 *   once the channel is closed and every value was received.
 * - A send with room, or a receive with a value waiting, allocates nothing;
 *   a task that must wait costs one waiter object.
 * - Both are select cases: `yield* B.select([ch.recv(), other.send(v),
 *   B.timeout(100)])` — a send that loses delivers nothing, a receive that
 *   loses takes nothing.
 * - The operation `send(v)` makes is used once: `yield*` it, or put it in one
 *   select (using it again throws a `TypeError`). `recv()` can be used any
 *   number of times, by any number of tasks.
 * - Fair: waiting senders and receivers are served in FIFO order.
 * - Cancellation-safe: a cancelled send delivered nothing, a cancelled
 *   receive took nothing; a task woken with a value keeps it (`Cancelled`
 *   comes at its next wait).
 * - `close()` ends it: receivers get what is buffered, then `END`; a send on
 *   a closed channel throws `ChannelClosed` (senders waiting when it closes
 *   too). A channel belongs to its domain.
 *
 * @example
 * ```ts
 * const jobs = new Channel<string>(16);
 * const worker = B.spawn(function* () {
 *   for (let url = yield* jobs.recv(); url !== END; url = yield* jobs.recv()) yield* handle(url);
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
  /** @internal Tasks and selects waiting to send, with their values. */
  readonly senders = new WaitQueue<Sender<T>>();
  /** @internal Tasks and selects waiting to receive. */
  readonly receivers = new WaitQueue<Receiver<T | typeof END>>();
  /** @internal */ private closed = false;
  /** @internal The operation every `recv()` returns. */ private readonly receive = new Receive<T | typeof END>(this);
  /** @internal The last send `send(v)` made: handed out again once it was used. */ private spare: Send<T> | null = null;
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

  /** How many tasks and selects wait to send and to receive (a select that has just been decided elsewhere counts until its task resumes). */
  get waiters(): { readonly senders: number; readonly receivers: number } {
    return { senders: this.senders.size, receivers: this.receivers.size };
  }

  /**
   * Sends `value`: to the oldest waiting receiver, or into the buffer; waits
   * (FIFO) while the channel is full. A select case, and an operation on its
   * own, which is used once: `yield*` it, or put it in one select. (The
   * channel reuses the object once it was used: that is why a send allocates
   * nothing, and why an operation kept for a second use is refused.)
   *
   * @example
   * ```ts
   * yield* ch.send(42);
   * ```
   * @throws ChannelClosed when the channel is closed, or closes while the send waits (the value was not delivered).
   * @throws Cancelled when the task is cancelled while waiting (the value was not delivered).
   * @throws TypeError when `value` is `END` or `EMPTY`; (from `yield*` or the select) when the operation was used already, or when it would wait outside a task.
   */
  send(value: T): SelectCase<void> {
    checkValue(value);
    const spare = this.spare;
    if (spare !== null && !spare.armed) {
      spare.arm(value);
      return spare;
    }
    const op = new Send(this, value);
    this.spare = op;
    return op;
  }

  /**
   * Receives the oldest value; waits (FIFO) while the channel is empty;
   * evaluates to `END` once it is closed and drained. The same operation
   * every time: a select case, and an operation on its own.
   *
   * @example
   * ```ts
   * for (let v = yield* ch.recv(); v !== END; v = yield* ch.recv()) console.log(v);
   * ```
   * @throws Cancelled when the task is cancelled while waiting (it took nothing).
   * @throws TypeError (from `yield*`) when it would wait outside a task.
   */
  recv(): SelectCase<T | typeof END> {
    return this.receive;
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
   * @throws TypeError when `value` is `END` or `EMPTY`.
   */
  trySend(value: T): boolean {
    checkValue(value);
    return this.put(value);
  }

  /** @internal `trySend` of a value `send(v)` checked already. */
  put(value: T): boolean {
    if (this.closed) throw new ChannelClosed();
    if (this.receivers.size !== 0 && handToReceiver(this.receivers, value)) return true;
    if (this.buffer.size >= this.capacity) return false;
    this.buffer.push(value);
    return true;
  }

  /**
   * Receives a value if one is there (buffered, or offered by a waiting
   * sender); `END` once the channel is closed and drained; `EMPTY` when a
   * receive would wait. Callable from plain callbacks.
   *
   * @example
   * ```ts
   * const v = ch.tryRecv();
   * if (v !== EMPTY && v !== END) use(v);
   * ```
   */
  tryRecv(): T | typeof END | typeof EMPTY {
    if (this.buffer.size !== 0) {
      const value = this.buffer.shift();
      // Room was made: the oldest waiting sender's value takes it.
      for (let w = this.senders.shift(); w !== null; w = this.senders.shift()) {
        if (w.release()) {
          this.buffer.push(w.value);
          break;
        }
      }
      return value;
    }
    for (let w = this.senders.shift(); w !== null; w = this.senders.shift()) {
      if (w.release()) return w.value;
    }
    return this.closed ? END : EMPTY;
  }

  /**
   * Closes the channel: no more sends (they throw `ChannelClosed`, and so do
   * the sends waiting now); receivers get the buffered values, then `END`.
   * Returns whether this call closed it (false: it was closed).
   *
   * @example
   * ```ts
   * try { for (const x of xs) yield* ch.send(x); } finally { ch.close(); }
   * ```
   */
  close(): boolean {
    if (this.closed) return false;
    this.closed = true;
    endReceivers(this.receivers, END);
    for (let w = this.senders.shift(); w !== null; w = this.senders.shift()) w.fail(new ChannelClosed());
    return true;
  }

  /** @internal What `recv()` takes at once: `tryRecv`. */
  poll(): T | typeof END | typeof EMPTY {
    return this.tryRecv();
  }

  /** @internal `yield* send(v)`: delivered at once, or a waiter parked in the queue. */
  startSend(value: T): Iterator<Instruction, void, unknown> {
    if (this.put(value)) return completedIterator(undefined);
    const w = new SendWait(this, self("Channel.send()"), value);
    this.senders.push(w);
    return w;
  }
}

function checkValue(value: unknown): void {
  if (value === END || value === EMPTY) {
    throw new TypeError(`a channel cannot carry ${String(value)}: it is what a receive evaluates to when there is no value`);
  }
}

keepLocal("Channel", Channel, "create it in the domain that uses it, and pass values to parallel tasks as arguments and results");

// One object of each class the channel's operations make, with what programs
// put in their fields, so that their maps live as long as the program (see
// keepShapes in @bobbin/core/lowlevel).
const shape = new Channel<unknown>(1);
shape.trySend(0);
shape.tryRecv();
keepShapes(
  shape,
  shape.send(undefined),
  shape.send(0),
  new Waiting<unknown>(null as never, 0, undefined),
  new Waiting<unknown>(null as never, 0, 0),
  new SendWait<unknown>(shape, null as never, undefined),
  new SendWait<unknown>(shape, null as never, 0),
);
const receiving = new RecvWait<unknown>(shape, null as never);
receiving.give(0);
keepShapes(receiving);
