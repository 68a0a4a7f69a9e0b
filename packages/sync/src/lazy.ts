/**
 * `Lazy` (Miou's `Lazy`): a value computed once, on first demand, by whichever
 * task forces it first.
 */
import { type Instruction, type Operation, self, type Task } from "@bobbin/core";
import { type Body, callBody, checkBody, isCancellationOf } from "./call.js";
import { LazyUndefined } from "./errors.js";
import { DONE, WaitOp, WaitQueue } from "./waiters.js";

const FUN = 0;
const RUN = 1;
const VAL = 2;
const EXN = 3;

/** A task waiting for another task's computation of the value. */
class ForceWait extends WaitOp<void> {
  constructor(
    private readonly lazy: Lazy<unknown>,
    task: Task<unknown>,
  ) {
    super(task);
  }

  protected resume(): IteratorResult<Instruction, void> {
    return DONE;
  }

  protected leave(): void {
    this.lazy.queue.remove(this);
  }
}

/** The operation of a forced lazy: completes at once with its memoised result. */
class Forced<T> implements Iterator<Instruction, T, unknown>, Operation<T> {
  readonly result: IteratorReturnResult<T>;

  constructor(value: T) {
    this.result = { done: true, value };
  }

  [Symbol.iterator](): this {
    return this;
  }

  next(): IteratorResult<Instruction, T> {
    return this.result;
  }

  throw(error: unknown): never {
    throw error;
  }

  return(): IteratorResult<Instruction, T> {
    return this.result;
  }
}

/**
 * A suspended computation whose result is memoised (Miou's `Lazy`).
 *
 * - `force()` runs the computation in the first task that forces it; other
 *   tasks forcing meanwhile wait for that result. The computation may be a
 *   generator function (it can suspend: spawn, await, lock…) or a plain
 *   function.
 * - The value, or the error the computation threw, is memoised: every later
 *   `force` returns the same value or throws the same error, at once.
 * - A computation that forces its own lazy value raises `LazyUndefined`.
 * - Cancellation: a waiting forcer that is cancelled just leaves. When the
 *   forcer running the computation is cancelled, nothing is memoised (its
 *   `Cancelled` belongs to it, not to the value): the lazy value goes back to
 *   unforced, and the next waiter, if any, runs the computation afresh.
 *
 * @example
 * ```ts
 * const config = Lazy.fromFun(function* () { return JSON.parse(yield* readFile("config.json")); });
 * const a = yield* config.force();   // computed here
 * const b = yield* config.force();   // memoised: a === b
 * ```
 * @throws from `force`: the computation's memoised error, LazyUndefined, Cancelled.
 */
export class Lazy<T> {
  private state: number;
  private fn: Body<[], T> | null;
  private outcome: unknown;
  private forced: Forced<T> | null = null;
  private runner: Task<unknown> | null = null;
  /** @internal Tasks waiting for the running computation. */
  readonly queue = new WaitQueue<ForceWait>();

  private constructor(state: number, fn: Body<[], T> | null, outcome: unknown) {
    this.state = state;
    this.fn = fn;
    this.outcome = outcome;
    if (state === VAL) this.forced = new Forced(outcome as T);
  }

  /**
   * A lazy value that is already computed (Miou's `Lazy.from_val`).
   * @example
   * ```ts
   * const two = Lazy.fromVal(2);
   * ```
   */
  static fromVal<T>(value: T): Lazy<T> {
    return new Lazy<T>(VAL, null, value);
  }

  /**
   * A lazy value computed by `fn` on first `force` (Miou's `Lazy.from_fun`).
   * `fn` may be a generator function (it can suspend) or a plain function.
   * @example
   * ```ts
   * const table = Lazy.fromFun(() => buildTable());
   * const remote = Lazy.fromFun(function* () { return yield* B.promise(() => fetchJson(url)); });
   * ```
   * @throws TypeError when `fn` is not a function.
   */
  static fromFun<T>(fn: () => Generator<Instruction, T, unknown>): Lazy<T>;
  static fromFun<T>(fn: () => T): Lazy<T>;
  static fromFun<T>(fn: Body<[], T>): Lazy<T> {
    checkBody(fn, "Lazy.fromFun");
    return new Lazy<T>(FUN, fn, undefined);
  }

  /** Whether the value (or error) is memoised. */
  get isForced(): boolean {
    return this.state >= VAL;
  }

  /** How many tasks wait for the computation another task is running. */
  get waiters(): number {
    return this.queue.size;
  }

  /**
   * Returns the value, computing it in this task if nobody has yet, or
   * waiting for the task that is computing it.
   *
   * @example
   * ```ts
   * const v = yield* lazy.force();
   * ```
   * @throws the error the computation threw (memoised).
   * @throws LazyUndefined when called from within the lazy value's own computation.
   * @throws Cancelled when the task is cancelled while computing or waiting.
   * @throws TypeError outside a task.
   */
  force(): Operation<T> {
    const forced = this.forced;
    if (forced !== null) return forced;
    return this.run();
  }

  private *run(): Generator<Instruction, T, unknown> {
    const task = self("Lazy.force()");
    for (;;) {
      switch (this.state) {
        case VAL:
          return this.outcome as T;
        case EXN:
          throw this.outcome;
        case FUN:
          return yield* this.compute(task);
        default: {
          if (this.runner === task) throw new LazyUndefined(task.uid);
          const w = new ForceWait(this as Lazy<unknown>, task);
          this.queue.push(w);
          yield* w; // then look again: a value, an error, or a computation to take over
        }
      }
    }
  }

  private *compute(task: Task<unknown>): Generator<Instruction, T, unknown> {
    const fn = this.fn!;
    this.state = RUN;
    this.runner = task;
    let value: T;
    try {
      value = yield* callBody(fn, []);
    } catch (error) {
      this.runner = null;
      if (isCancellationOf(error, task)) {
        // The forcer was cancelled: not the value's fault. Back to unforced;
        // the next waiter computes it.
        // The oldest waiter runs first and takes over; the others queue again behind it.
        this.state = FUN;
        this.wakeAll();
      } else {
        this.state = EXN;
        this.outcome = error;
        this.fn = null;
        this.wakeAll();
      }
      throw error;
    }
    this.runner = null;
    this.state = VAL;
    this.outcome = value;
    this.fn = null;
    this.forced = new Forced(value);
    this.wakeAll();
    return value;
  }

  private wakeAll(): void {
    for (let w = this.queue.shift(); w !== null; w = this.queue.shift()) w.wake();
  }
}
