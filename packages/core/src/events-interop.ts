/**
 * Events from Node: `once`, a select case that happens with the next event,
 * and `on`, a stream of events a fiber reads one at a time. Both listen on a
 * Node `EventEmitter` (anything with `on` and `removeListener`) or a DOM-style
 * `EventTarget`, and take their listeners off on every exit path: the event,
 * an error, the end of the stream, a lost select, a cancelled task, `close()`.
 *
 * On an emitter, an `"error"` event makes the wait throw (unless `"error"` is
 * the event waited for), as with Node's `events.once` and `events.on`.
 */
import { describe } from "./describe.js";
import { EventOverflow } from "./errors.js";
import { RunQueue } from "./kernel/run-queue.js";
import { ENDED, type Received, received } from "./received.js";
import { type Choice, SelectCase } from "./select.js";

/**
 * An event emitter as `once` and `on` use it: Node's `EventEmitter` and its
 * subclasses (streams, sockets, child processes…) are ones.
 *
 * @example
 * ```ts
 * const source: B.EmitterLike = new EventEmitter();
 * ```
 */
export interface EmitterLike {
  on(event: string | symbol, listener: (...args: unknown[]) => void): unknown;
  removeListener(event: string | symbol, listener: (...args: unknown[]) => void): unknown;
}

/**
 * What `once` and `on` listen on: an emitter, or an `EventTarget` (whose
 * listeners receive the `Event` object).
 *
 * @example
 * ```ts
 * const sources: B.EventSource[] = [process, new EventTarget(), AbortSignal.timeout(10)];
 * ```
 */
export type EventSource = EmitterLike | EventTarget;

type Listener = (...args: unknown[]) => void;

/** Adds `listener` for `event` on `source`. */
function listen(source: EventSource, event: string | symbol, listener: Listener): void {
  if (isEmitter(source)) source.on(event, listener);
  else source.addEventListener(event as string, listener);
}

/** Takes `listener` for `event` off `source`. */
function unlisten(source: EventSource, event: string | symbol, listener: Listener): void {
  if (isEmitter(source)) source.removeListener(event, listener);
  else source.removeEventListener(event as string, listener);
}

function isEmitter(source: EventSource): source is EmitterLike {
  return typeof (source as EmitterLike).on === "function";
}

/** Whether an `"error"` event on `source` is a failure of a wait for `event`. */
function errorsFail(source: EventSource, event: string | symbol): boolean {
  return event !== "error" && isEmitter(source);
}

function checkSource(source: unknown, event: unknown, caller: string): asserts source is EventSource {
  const emitter = source !== null && typeof source === "object" && typeof (source as EmitterLike).on === "function";
  const target = source instanceof EventTarget;
  if ((!emitter || typeof (source as EmitterLike).removeListener !== "function") && !target) {
    throw new TypeError(`${caller} expects an EventEmitter (with on and removeListener) or an EventTarget, got ${describe(source)}`);
  }
  if (typeof event !== "string" && (typeof event !== "symbol" || target)) {
    throw new TypeError(`${caller} expects an event name (${target ? "a string" : "a string or a symbol"}), got ${describe(event)}`);
  }
}

/** A select waiting for the next event: its listeners, until it is withdrawn or the event comes. */
class OnceWaiter {
  private readonly onEvent: Listener = (...args) => {
    this.stop();
    this.choice.claim(this.index, args);
  };
  private readonly onError: Listener = (error) => {
    this.stop();
    this.choice.fail(this.index, error);
  };

  constructor(
    private readonly source: EventSource,
    private readonly event: string | symbol,
    private readonly choice: Choice,
    private readonly index: number,
  ) {
    listen(source, event, this.onEvent);
    if (errorsFail(source, event)) listen(source, "error", this.onError);
  }

  stop(): void {
    unlisten(this.source, this.event, this.onEvent);
    if (errorsFail(this.source, this.event)) unlisten(this.source, "error", this.onError);
  }
}

class Once<T extends unknown[]> extends SelectCase<T, OnceWaiter> {
  constructor(
    private readonly source: EventSource,
    private readonly event: string | symbol,
  ) {
    super();
  }

  /** An event is never there already. */
  offer(): void {}

  enlist(choice: Choice, index: number): OnceWaiter {
    return new OnceWaiter(this.source, this.event, choice, index);
  }

  withdraw(waiter: OnceWaiter): void {
    waiter.stop();
  }

  override describe(): string {
    return `once ${describeEvent(this.source, this.event)}`;
  }
}

/** An event of a source, in words, for dumps: `"listening" of a Server`. */
function describeEvent(source: EventSource, event: string | symbol): string {
  return `${typeof event === "symbol" ? event.toString() : JSON.stringify(event)} of ${describe(source)}`;
}

/**
 * A select case that happens with the next `event` of `source`, its value the
 * listener's arguments (`[event]` for an `EventTarget`); on its own,
 * `yield* B.once(source, event)` waits for it. The listeners are added when
 * the select starts waiting and removed when the event comes, when another
 * case wins, or when the task is cancelled. On an emitter, an `"error"` event
 * makes it throw that error.
 *
 * @example
 * ```ts
 * const [code] = yield* B.once<[number | null]>(child, "exit");
 * const r = yield* B.select([B.once(server, "listening"), B.timeout(1000)]);
 * ```
 * @throws the error of an `"error"` event (emitters, when `event` is not `"error"`).
 * @throws TypeError when `source` is neither an emitter nor an `EventTarget`, or `event` is not a name.
 * @throws Cancelled when the task is cancelled while waiting.
 */
export function once<T extends unknown[] = unknown[]>(source: EventSource, event: string | symbol): SelectCase<T> {
  checkSource(source, event, "once(source, event)");
  return new Once<T>(source, event);
}

/**
 * Options of {@link on}.
 *
 * @example
 * ```ts
 * using lines = B.on<[string]>(rl, "line", { close: "close", capacity: 256 });
 * ```
 */
export interface OnOptions {
  /** How many events are kept until the task reads them; one more fails the stream with `EventOverflow`. Default 1024. */
  readonly capacity?: number | undefined;
  /** Events that end the stream (e.g. `"end"`, `"close"`): it is done once the events before them are read. */
  readonly close?: string | symbol | readonly (string | symbol)[] | undefined;
}

const DEFAULT_CAPACITY = 1024;
const NO_ERROR = Symbol("no error");

/** A task waiting in `next()`. */
interface Reader {
  readonly choice: Choice;
  readonly index: number;
}

/**
 * The events of one kind from one source, in order, buffered until a task
 * reads them with `yield* stream.next()`; made by {@link on}. It listens
 * until it is closed — by `close()` (or `using`), by one of its `close`
 * events, by an `"error"` event or an overflow — and then takes every
 * listener off.
 *
 * @example
 * ```ts
 * using lines = B.on<[string]>(readline, "line", { close: "close" });
 * for (let r = yield* lines.next(); !r.done; r = yield* lines.next()) console.log(r.value[0]);
 * ```
 * @throws from `next()`: the `"error"` event's error, or `EventOverflow`, once the events before it were read.
 */
export class EventStream<T extends unknown[] = unknown[]> implements Disposable {
  /** @internal */ private readonly buffer = new RunQueue<T>(16);
  /** @internal */ private readonly readers: Reader[] = [];
  /** @internal */ private listening = true;
  /** @internal What the stream failed with, thrown once its buffered events are read. */
  private error: unknown = NO_ERROR;
  /** @internal */ private readonly onEvent: Listener = (...args) => this.push(args as T);
  /** @internal */ private readonly onError: Listener = (error) => this.end(error);
  /** @internal */ private readonly onClose: Listener = () => this.end(NO_ERROR);

  /** @internal */
  constructor(
    private readonly source: EventSource,
    private readonly event: string | symbol,
    private readonly capacity: number,
    private readonly closeEvents: readonly (string | symbol)[],
  ) {
    listen(source, event, this.onEvent);
    if (errorsFail(source, event)) listen(source, "error", this.onError);
    for (const name of closeEvents) listen(source, name, this.onClose);
  }

  /** How many events wait to be read. */
  get size(): number {
    return this.buffer.size;
  }

  /** Whether the stream still listens (false once closed, ended, failed or overflowed). */
  get isListening(): boolean {
    return this.listening;
  }

  /**
   * The next event, as a select case (and an operation on its own):
   * `{ done: false, value }` with the listener's arguments, or `{ done: true }`
   * once the stream has ended and its events were read.
   *
   * @example
   * ```ts
   * const r = yield* data.next();
   * if (!r.done) consume(r.value[0]);
   * ```
   * @throws the `"error"` event's error, or `EventOverflow`, once the events before it were read (then the stream is done).
   * @throws Cancelled when the task is cancelled while waiting.
   */
  next(): SelectCase<Received<T>> {
    return new Next<T>(this);
  }

  /**
   * Stops listening and drops the events not read yet; readers waiting get
   * `{ done: true }`. Closing twice does nothing.
   *
   * @example
   * ```ts
   * const data = B.on(socket, "data");
   * try { … } finally { data.close(); }
   * ```
   * @throws what the source's `removeListener` throws (Node's never does).
   */
  close(): void {
    while (!this.buffer.isEmpty()) this.buffer.shift();
    this.error = NO_ERROR;
    this.end(NO_ERROR);
  }

  /** Closes the stream at the end of a `using` block. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** @internal Offers the next event (or the end, or the error) to a select. */
  offer(choice: Choice, index: number): void {
    if (!this.buffer.isEmpty()) choice.claim(index, received(this.buffer.shift()!));
    else if (this.error !== NO_ERROR) {
      // The error is thrown once; afterwards the stream is done.
      const error = this.error;
      if (choice.fail(index, error)) this.error = NO_ERROR;
    } else if (!this.listening) choice.claim(index, ENDED);
  }

  /** @internal */
  enlist(choice: Choice, index: number): Reader {
    const reader = { choice, index };
    this.readers.push(reader);
    return reader;
  }

  /** @internal */
  withdraw(reader: Reader): void {
    const i = this.readers.indexOf(reader);
    if (i >= 0) this.readers.splice(i, 1);
  }

  /** @internal An event: to the oldest reader still waiting, else into the buffer. */
  private push(args: T): void {
    for (let reader = this.readers.shift(); reader !== undefined; reader = this.readers.shift()) {
      if (reader.choice.claim(reader.index, received(args))) return;
    }
    if (this.buffer.size >= this.capacity) this.end(new EventOverflow(String(this.event), this.capacity));
    else this.buffer.push(args);
  }

  /** @internal Its event and source, in words (for dumps). */
  describeEvent(): string {
    return describeEvent(this.source, this.event);
  }

  /** @internal The stream stops listening; the waiting readers (the buffer is empty) learn how it ended. */
  private end(error: unknown): void {
    if (!this.listening) return;
    this.listening = false;
    const { source, event } = this;
    unlisten(source, event, this.onEvent);
    if (errorsFail(source, event)) unlisten(source, "error", this.onError);
    for (const name of this.closeEvents) unlisten(source, name, this.onClose);
    this.error = error;
    for (let reader = this.readers.shift(); reader !== undefined; reader = this.readers.shift()) this.offer(reader.choice, reader.index);
  }
}

class Next<T extends unknown[]> extends SelectCase<Received<T>, Reader> {
  constructor(private readonly stream: EventStream<T>) {
    super();
  }

  offer(choice: Choice, index: number): void {
    this.stream.offer(choice, index);
  }

  enlist(choice: Choice, index: number): Reader {
    return this.stream.enlist(choice, index);
  }

  withdraw(reader: Reader): void {
    this.stream.withdraw(reader);
  }

  override describe(): string {
    return `next ${this.stream.describeEvent()}`;
  }
}

/**
 * Listens to `event` on `source` and returns an {@link EventStream}: read the
 * events in order with `yield* stream.next()` (a select case too). Events
 * arriving while nobody reads are buffered, up to `capacity`; one more stops
 * the stream with `EventOverflow` (a silent loss of data events would be
 * worse). `close` events end it; an `"error"` event fails it. Close it with
 * `using` or `close()` to take its listeners off when the task is done with
 * it early.
 *
 * @example
 * ```ts
 * using chunks = B.on<[Buffer]>(fileStream, "data", { close: "end", capacity: 64 });
 * for (let r = yield* chunks.next(); !r.done; r = yield* chunks.next()) total += r.value[0].length;
 * ```
 * @throws TypeError when `source` is neither an emitter nor an `EventTarget`, or `event` or `close` is not a name.
 * @throws RangeError when `capacity` is not an integer ≥ 1.
 */
export function on<T extends unknown[] = unknown[]>(source: EventSource, event: string | symbol, options: OnOptions = {}): EventStream<T> {
  checkSource(source, event, "on(source, event)");
  if (options === null || typeof options !== "object")
    throw new TypeError(`on(source, event, options) expects { capacity, close }, got ${describe(options)}`);
  const capacity = options.capacity ?? DEFAULT_CAPACITY;
  if (!Number.isInteger(capacity) || capacity < 1) {
    throw new RangeError(`on({ capacity }) must be an integer ≥ 1 (events kept until read), got ${describe(capacity)}`);
  }
  const close = options.close === undefined ? [] : Array.isArray(options.close) ? options.close : [options.close];
  for (const name of close) checkSource(source, name, "on({ close })");
  return new EventStream<T>(source, event, capacity, close as readonly (string | symbol)[]);
}
