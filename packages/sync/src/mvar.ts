/**
 * `MVar` (µthreads, after Concurrent Haskell): a box that is empty or full.
 */
import { type Instruction, type Operation, self, type Task } from "@bobbin/core";
import { done } from "@bobbin/core/lowlevel";
import { nextSerial, WaitOp, WaitQueue } from "./waiters.js";

/** A task parked in `take`, `read` or `put`; `value` is what it gives or receives. */
class MVarWait<T> extends WaitOp<T> {
  constructor(
    private readonly queueOf: WaitQueue<MVarWait<T>>,
    task: Task<unknown>,
    /** @internal */ public value: T,
    /** What it waits to do, for dumps: "take from MVar#2". */
    private readonly doing: string,
  ) {
    super(task);
  }

  override describe(): string {
    return this.doing;
  }

  protected resume(): IteratorResult<Instruction, T> {
    const value = this.value;
    this.value = undefined as T; // do not keep it alive through the op
    return { done: true, value };
  }

  protected leave(): void {
    this.queueOf.remove(this);
  }
}

/**
 * What `tryTake`/`tryRead` return when the MVar was full: the value, boxed so
 * that an MVar of `undefined` can be told from an empty one.
 *
 * @example
 * ```ts
 * const got: Taken<number> | undefined = box.tryTake();
 * if (got) console.log(got.value);
 * ```
 */
export interface Taken<T> {
  readonly value: T;
}

/**
 * A synchronising variable (µthreads' and Concurrent Haskell's MVar): a box
 * that is either empty or holds one value.
 *
 * - `take` empties a full box (waiting while it is empty); `put` fills an
 *   empty one (waiting while it is full); `read` returns the value without
 *   taking it (waiting while empty). `tryTake`, `tryPut` and `tryRead` never
 *   wait.
 * - **Fair and single-wake-up**: takers, putters and readers are each served
 *   in FIFO order; a `put` into an empty box wakes every waiting reader with
 *   the value, then hands it straight to the oldest taker (the box stays
 *   empty), or else keeps it. A `take` from a full box refills it at once from
 *   the oldest waiting putter.
 * - **Cancellation-aware**: a cancelled taker or reader leaves the queue
 *   without a value (no value is ever lost to a cancelled taker); a cancelled
 *   putter leaves without putting.
 *
 * @example
 * ```ts
 * const box = new MVar<string>();
 * const reader = B.spawn(function* () { return yield* box.take(); });
 * yield* box.put("hello");
 * yield* B.awaitExn(reader);   // "hello"
 * ```
 * @throws Cancelled from a `take`, `put` or `read` cancelled while waiting; TypeError outside a task.
 */
export class MVar<T> {
  private full = false;
  private value: T = undefined as T;
  private readonly takers = new WaitQueue<MVarWait<T>>();
  private readonly readers = new WaitQueue<MVarWait<T>>();
  private readonly putters = new WaitQueue<MVarWait<T>>();
  private readonly serial = nextSerial();

  /** `MVar#n`, as diagnostics name it. */
  toString(): string {
    return `MVar#${this.serial}`;
  }

  /**
   * Makes an empty MVar.
   * @example
   * ```ts
   * const box = MVar.empty<number>();
   * ```
   */
  static empty<T>(): MVar<T> {
    return new MVar<T>();
  }

  /**
   * Makes an MVar holding `value`.
   * @example
   * ```ts
   * const lock = MVar.of<void>(undefined);   // an MVar used as a lock
   * ```
   */
  static of<T>(value: T): MVar<T> {
    const box = new MVar<T>();
    box.full = true;
    box.value = value;
    return box;
  }

  /** Whether the box is empty. */
  get isEmpty(): boolean {
    return !this.full;
  }

  /** How many tasks wait in `take`, `read` and `put` (cancelled waiters are never counted). */
  get waiters(): { readonly takers: number; readonly readers: number; readonly putters: number } {
    return { takers: this.takers.size, readers: this.readers.size, putters: this.putters.size };
  }

  /**
   * Takes the value, leaving the box empty; waits (FIFO) while it is empty.
   *
   * @example
   * ```ts
   * const job = yield* jobs.take();
   * ```
   * @throws Cancelled when the task is cancelled while waiting (it then took nothing).
   * @throws TypeError outside a task.
   */
  take(): Operation<T> {
    return { [Symbol.iterator]: () => this.startTake() };
  }

  /**
   * Puts `value` in the box; waits (FIFO) while it is full.
   *
   * @example
   * ```ts
   * yield* jobs.put(job);
   * ```
   * @throws Cancelled when the task is cancelled while waiting (it then put nothing).
   * @throws TypeError outside a task.
   */
  put(value: T): Operation<void> {
    return { [Symbol.iterator]: () => this.startPut(value) };
  }

  /**
   * Returns the value without taking it; waits while the box is empty, and
   * gets the very value the next `put` brings (before any taker).
   *
   * @example
   * ```ts
   * const config = yield* configBox.read();
   * ```
   * @throws Cancelled when the task is cancelled while waiting.
   * @throws TypeError outside a task.
   */
  read(): Operation<T> {
    return { [Symbol.iterator]: () => this.startRead() };
  }

  /**
   * Takes the value if the box is full; never waits. Returns `{ value }`, or
   * `undefined` when the box was empty.
   *
   * @example
   * ```ts
   * const got = box.tryTake();
   * if (got !== undefined) use(got.value);
   * ```
   */
  tryTake(): Taken<T> | undefined {
    if (!this.full) return undefined;
    return { value: this.takeNow() };
  }

  /**
   * Puts `value` if the box is empty; never waits. Returns whether it did.
   * Callable from plain callbacks as well as tasks.
   *
   * @example
   * ```ts
   * if (!box.tryPut(v)) console.log("busy");
   * ```
   */
  tryPut(value: T): boolean {
    if (this.full) return false;
    this.fill(value);
    return true;
  }

  /**
   * Reads the value if the box is full; never waits. Returns `{ value }`, or
   * `undefined` when the box was empty.
   *
   * @example
   * ```ts
   * const seen = box.tryRead()?.value;
   * ```
   */
  tryRead(): Taken<T> | undefined {
    return this.full ? { value: this.value } : undefined;
  }

  // -- internals ------------------------------------------------------------

  private startTake(): Iterator<Instruction, T, unknown> {
    const task = self("MVar.take()");
    if (this.full) return done(this.takeNow());
    const w = new MVarWait<T>(this.takers, task, undefined as T, `take from ${this}`);
    this.takers.push(w);
    return w;
  }

  private startRead(): Iterator<Instruction, T, unknown> {
    const task = self("MVar.read()");
    if (this.full) return done(this.value);
    const w = new MVarWait<T>(this.readers, task, undefined as T, `read ${this}`);
    this.readers.push(w);
    return w;
  }

  private startPut(value: T): Iterator<Instruction, void, unknown> {
    const task = self("MVar.put()");
    if (!this.full) {
      this.fill(value);
      return done();
    }
    const w = new MVarWait<T>(this.putters, task, value, `put into ${this}`);
    this.putters.push(w);
    // Woken, it completes with `undefined`: the taker that made room cleared its value.
    return w as unknown as Iterator<Instruction, void, unknown>;
  }

  /** Empties a full box and refills it from the oldest live putter. */
  private takeNow(): T {
    const value = this.value;
    this.value = undefined as T;
    this.full = false;
    for (let w = this.putters.shift(); w !== null; w = this.putters.shift()) {
      // A cancelled-and-detached putter (signal() false) put nothing.
      if (w.wake()) {
        this.value = w.value;
        w.value = undefined as T;
        this.full = true;
        break;
      }
    }
    return value;
  }

  /** A value arrives in the empty box: readers see it, the oldest live taker gets it, or it stays. */
  private fill(value: T): void {
    for (let w = this.readers.shift(); w !== null; w = this.readers.shift()) {
      w.value = value;
      w.wake();
    }
    for (let w = this.takers.shift(); w !== null; w = this.takers.shift()) {
      w.value = value;
      if (w.wake()) return;
      w.value = undefined as T; // cancelled and detached: the next taker gets it
    }
    this.value = value;
    this.full = true;
  }
}
