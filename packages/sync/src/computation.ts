/**
 * `Computation` (Miou's `Computation`, from Miou_sync): a cell completed once,
 * with a value or an error, by whoever gets there first (a task, a Node
 * callback, another computation's canceller), and awaited by any number of
 * tasks. Built on core's `Trigger`: every waiter parks on one, and so may any
 * trigger attached by hand.
 */
import { type Instruction, type Operation, type Result, self, type Task } from "@bobbin/core";
import { done, Trigger } from "@bobbin/core/lowlevel";
import { type Body, callBody, checkBody, isCancellationOf } from "./call.js";
import { keepLocal } from "./shared/portable.js";
import { nextSerial, WaitOp } from "./waiters.js";

/**
 * The outcome of a computation that was cancelled (Miou's `Cancelled of exn`):
 * the error it was cancelled with, as a failed `Result`.
 *
 * @example
 * ```ts
 * const failure: Failure | undefined = c.cancelled();
 * if (failure) console.error(failure.error);
 * ```
 */
export type Failure = Extract<Result<never>, { ok: false }>;

/** What a waiter gets from the outcome: the outcome itself (`await`), or its value, thrown when it is an error (`awaitExn`). */
type Deliver<T, R> = (outcome: Result<T>) => R;

const asResult = <T>(outcome: Result<T>): Result<T> => outcome;

function unwrap<T>(outcome: Result<T>): T {
  if (outcome.ok) return outcome.value;
  throw outcome.error;
}

/** What completion signals: a trigger attached with `tryAttach`, or a task parked in `await`. */
interface Signallable {
  signal(): boolean;
}

/** A task parked in `await`/`awaitExn`: attached to the computation, and forgotten by it if the task is cancelled. */
class AwaitWait<T, R> extends WaitOp<R> implements Signallable {
  constructor(
    private readonly computation: Computation<T>,
    task: Task<unknown>,
    private readonly deliver: Deliver<T, R>,
  ) {
    super(task);
  }

  protected resume(): IteratorResult<Instruction, R> {
    // Only the completion signals this trigger: the outcome is there.
    return { done: true, value: this.deliver(this.computation.peek()!) };
  }

  /** Completion: wake the task. */
  signal(): boolean {
    return this.wake();
  }

  protected leave(): void {
    this.computation.forget(this);
  }

  override describe(): string {
    return `await ${this.computation}`;
  }
}

/**
 * The trigger of {@link Computation.canceller}: when signalled (by the
 * completion of the computation it is attached to, or by `detach`), it
 * cancels `into` if `from` was cancelled.
 */
class Canceller extends Trigger {
  constructor(
    private readonly from: Computation<unknown>,
    private readonly into: Computation<unknown>,
  ) {
    super();
  }

  /** Propagates `from`'s cancellation the first time; wakes no task (nobody waits on a canceller). */
  override signal(): boolean {
    if (this.isSignalled) return false;
    super.signal();
    const failure = this.from.cancelled();
    if (failure !== undefined) this.into.tryCancel(failure.error);
    return false;
  }

  /** @throws TypeError: a canceller is attached to a computation, not waited on (Miou's `Invalid_argument`). */
  override wait(): never {
    throw new TypeError("a canceller (Computation.canceller) is attached to a computation with tryAttach; no task can wait on it");
  }
}

/**
 * Miou's `Computation`: a one-shot cell in the *running* state until it is
 * completed, once, with a value (`tryReturn`) or an error (`tryCancel`), or
 * with what a function returns or throws (`tryCapture`). Any number of tasks
 * wait for it with `await`/`awaitExn`; core `Trigger`s attached to it with
 * `tryAttach` are signalled when it completes.
 *
 * - **Completed once**: the first `tryReturn`/`tryCancel` wins and returns
 *   `true`; every later one returns `false` and changes nothing.
 * - **Callable from anywhere in the domain**: `tryReturn`, `tryCancel`,
 *   `tryAttach`, `detach` and the inspections are plain calls, fine from a
 *   Node callback (a child process exiting, a timer, a signal handler).
 * - **Cancellation-safe**: a task cancelled while it awaits throws
 *   `Cancelled`, and its trigger is detached (nothing of it is left in the
 *   computation); the computation itself is untouched.
 * - "Cancelled" is Miou's word for the failed state: a computation is
 *   cancelled with any error, not only core's `Cancelled`.
 * - A computation belongs to its domain: it cannot be passed to `B.call`
 *   (return the value from the parallel task instead).
 *
 * @example
 * ```ts
 * import { spawn as spawnProcess } from "node:child_process";
 * const exited = Computation.create<number | null>();
 * spawnProcess("sleep", ["1"]).on("exit", (code) => exited.tryReturn(code));
 * const code = yield* exited.awaitExn();   // other tasks run meanwhile
 * ```
 * @throws from `awaitExn`: the error the computation was cancelled with; Cancelled from a cancelled wait.
 */
export class Computation<T> {
  /** The outcome; null while running. */
  private outcome: Result<T> | null = null;
  /** The triggers to signal on completion, oldest first; null once completed. */
  private triggers: Set<Signallable> | null = new Set();
  /** Names it in diagnostics. */
  private readonly serial = nextSerial();

  /**
   * Makes a computation in the running state (Miou's `Computation.create`).
   * @example
   * ```ts
   * const c = Computation.create<string>();
   * ```
   */
  static create<T>(): Computation<T> {
    return new Computation<T>();
  }

  /**
   * A trigger that, attached to `from` (with `from.tryAttach`), cancels
   * `into` with the same error when `from` is cancelled (Miou's
   * `Computation.canceller ~from ~into`). It does nothing when `from`
   * returns a value, nor when it is detached while `from` is running. No
   * task can wait on it.
   *
   * @example
   * ```ts
   * const stop = Computation.canceller({ from: parent, into: child });
   * parent.tryAttach(stop);
   * // … when child no longer depends on parent:
   * parent.detach(stop);
   * ```
   * @throws TypeError when `from` or `into` is not a Computation.
   */
  static canceller<A, B>({ from, into }: { readonly from: Computation<A>; readonly into: Computation<B> }): Trigger {
    checkComputation(from, "Computation.canceller({ from })");
    checkComputation(into, "Computation.canceller({ into })");
    return new Canceller(from as Computation<unknown>, into as Computation<unknown>);
  }

  /** Whether it is still running (not completed yet). */
  get isRunning(): boolean {
    return this.outcome === null;
  }

  /** How many triggers wait for completion: one per task parked in `await`/`awaitExn`, plus those attached with `tryAttach`. */
  get waiters(): number {
    return this.triggers === null ? 0 : this.triggers.size;
  }

  /**
   * Completes the computation with `value`, if it is running; says whether it
   * did. Wakes every waiter and signals every attached trigger.
   *
   * @example
   * ```ts
   * if (!c.tryReturn(42)) console.log("someone completed it first");
   * ```
   */
  tryReturn(value: T): boolean {
    return this.complete({ ok: true, value });
  }

  /**
   * Completes the computation as cancelled with `error`, if it is running;
   * says whether it did. Waiters get `error` (`await` as a failed result,
   * `awaitExn` thrown).
   *
   * @example
   * ```ts
   * c.tryCancel(new Error("gave up"));
   * ```
   */
  tryCancel(error: unknown): boolean {
    return this.complete({ ok: false, error });
  }

  /**
   * Runs `fn(...args)` and completes the computation with what it returns,
   * or cancels it with what it throws; says whether it completed it (false:
   * it was completed before, and the result is dropped). `fn` runs even
   * then, as in Miou. `fn` may be a generator function (it can suspend) or a
   * plain function.
   *
   * When the task running `tryCapture` is cancelled inside `fn`, the
   * computation is cancelled with that `Cancelled` (its waiters learn it will
   * not be completed) and the `Cancelled` is thrown on, so the task still
   * ends as cancelled.
   *
   * @example
   * ```ts
   * const done = yield* c.tryCapture(function* (n: number) { yield* B.yieldNow(); return n * 2; }, 21);
   * ```
   * @throws Cancelled when the task is cancelled while `fn` runs (after cancelling the computation with it).
   * @throws TypeError when `fn` is not a function.
   */
  tryCapture<A extends unknown[]>(fn: (...args: A) => Generator<Instruction, T, unknown>, ...args: A): Operation<boolean>;
  tryCapture<A extends unknown[]>(fn: (...args: A) => T, ...args: A): Operation<boolean>;
  tryCapture<A extends unknown[]>(fn: Body<A, T>, ...args: A): Operation<boolean> {
    checkBody(fn, "Computation.tryCapture");
    return capture(this, fn, args);
  }

  /**
   * The outcome: a result once completed, `undefined` while running (Miou's `peek`).
   *
   * @example
   * ```ts
   * const r = c.peek();
   * if (r?.ok) use(r.value);
   * ```
   */
  peek(): Result<T> | undefined {
    return this.outcome ?? undefined;
  }

  /**
   * The failed outcome, with the error it was cancelled with; `undefined`
   * while running or when it returned a value (Miou's `cancelled`).
   *
   * @example
   * ```ts
   * const failure = c.cancelled();
   * if (failure) console.error(failure.error);
   * ```
   */
  cancelled(): Failure | undefined {
    const outcome = this.outcome;
    return outcome !== null && !outcome.ok ? outcome : undefined;
  }

  /**
   * Throws the error the computation was cancelled with, if it was; does
   * nothing while running or when it returned (Miou's `raise_if_errored`).
   * A long computation calls it to stop early once someone cancelled it.
   *
   * @example
   * ```ts
   * for (const chunk of chunks) { c.raiseIfErrored(); yield* work(chunk); }
   * ```
   * @throws the error the computation was cancelled with.
   */
  raiseIfErrored(): void {
    const outcome = this.outcome;
    if (outcome !== null && !outcome.ok) throw outcome.error;
  }

  /**
   * Attaches `trigger`, to be signalled when the computation completes; says
   * whether it did (false: the computation has completed already, or the
   * trigger was signalled already). Attaching an attached trigger again
   * changes nothing.
   *
   * @example
   * ```ts
   * const t = new L.Trigger();
   * if (c.tryAttach(t)) yield* t.wait();   // until c completes
   * ```
   * @throws TypeError when `trigger` is not a core `Trigger`.
   */
  tryAttach(trigger: Trigger): boolean {
    checkTrigger(trigger, "Computation.tryAttach");
    if (this.triggers === null || trigger.isSignalled) return false;
    this.triggers.add(trigger);
    return true;
  }

  /**
   * Signals `trigger` and detaches it from the computation (Miou's
   * `detach`): a task waiting on it wakes, a canceller propagates (or not)
   * now, and the computation no longer refers to it.
   *
   * @example
   * ```ts
   * c.detach(t);   // stop waiting for c through t
   * ```
   * @throws TypeError when `trigger` is not a core `Trigger`.
   */
  detach(trigger: Trigger): void {
    checkTrigger(trigger, "Computation.detach");
    trigger.signal();
    this.triggers?.delete(trigger);
  }

  /** @internal A cancelled `await` stops waiting. */
  forget(waiter: Signallable): void {
    this.triggers?.delete(waiter);
  }

  /** `Computation#n`, as diagnostics name it (a task waiting in `await` reads `await Computation#n`). */
  toString(): string {
    return `Computation#${this.serial}`;
  }

  /**
   * Waits for the computation to complete, and returns its outcome: the
   * value, or the error it was cancelled with (Miou's `await`). A completed
   * computation returns at once, without suspending.
   *
   * @example
   * ```ts
   * const r = yield* c.await();
   * if (!r.ok) console.error("cancelled with", r.error);
   * ```
   * @throws Cancelled when the awaiting task is cancelled (its trigger is detached first).
   * @throws TypeError outside a task.
   */
  await(): Operation<Result<T>> {
    return { [Symbol.iterator]: () => this.startAwait(asResult<T>) };
  }

  /**
   * Waits for the computation to complete, and returns its value or throws
   * the error it was cancelled with (Miou's `await_exn`).
   *
   * @example
   * ```ts
   * const status = yield* exited.awaitExn();
   * ```
   * @throws the error the computation was cancelled with.
   * @throws Cancelled when the awaiting task is cancelled (its trigger is detached first).
   * @throws TypeError outside a task.
   */
  awaitExn(): Operation<T> {
    return { [Symbol.iterator]: () => this.startAwait(unwrap<T>) };
  }

  private startAwait<R>(deliver: Deliver<T, R>): Iterator<Instruction, R, unknown> {
    const outcome = this.outcome;
    if (outcome !== null) return done(deliver(outcome));
    const w = new AwaitWait(this, self("Computation.await()"), deliver);
    this.triggers!.add(w);
    return w;
  }

  private complete(outcome: Result<T>): boolean {
    const triggers = this.triggers;
    if (triggers === null) return false;
    this.outcome = outcome;
    this.triggers = null;
    for (const trigger of triggers) trigger.signal();
    return true;
  }
}

function* capture<A extends unknown[], T>(c: Computation<T>, fn: Body<A, T>, args: A): Generator<Instruction, boolean, unknown> {
  let value: T;
  try {
    value = yield* callBody(fn, args);
  } catch (error) {
    const completed = c.tryCancel(error);
    // The task's own cancellation is not only the computation's outcome: it goes on.
    if (isCancellationOf(error, self())) throw error;
    return completed;
  }
  return c.tryReturn(value);
}

function checkComputation(c: unknown, name: string): void {
  if (!(c instanceof Computation)) throw new TypeError(`${name} expects a Computation (Computation.create())`);
}

function checkTrigger(t: unknown, name: string): void {
  if (!(t instanceof Trigger))
    throw new TypeError(`${name} expects a Trigger of @bobbin/core/lowlevel (new Trigger(), or Computation.canceller)`);
}

keepLocal("Computation", Computation, "complete it in its own domain, and return the value from the parallel task instead");
