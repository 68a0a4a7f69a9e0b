/**
 * `Parked`: the base class of backend operations that may have to wait.
 *
 * An operation tries to complete in the fiber (`attempt`); when it cannot, it
 * registers with the backend (`wait`) and parks the task on a suspension
 * point; the backend calls `ready()` from a Node callback when it may go on,
 * and the operation tries again in the fiber. That is edge-triggered
 * readiness: data, connections and datagrams stay with the socket until a
 * fiber takes them, so nothing is lost when a waiter is cancelled.
 *
 * `Parked` handles the rest of the contract: cancellation and `withTimeout`'s
 * interruption (both thrown into the operation through `yield*`: it
 * unregisters and hands unused readiness on), an expired `withTimeout` scope
 * at start, one suspension point per operation reused across waits, and no
 * Promise or closure per operation.
 */
import * as B from "@bobbin/core";
import { checkTimeouts } from "./timeout.js";

/**
 * Where a parked operation reports that it may go on: anything with
 * `signal(s)` that makes the events backend's next `select` return
 * `B.signal(s)`, such as {@link NodeLoop}.
 *
 * @example
 * ```ts
 * const loop: Signaller = { signal: (s) => ready.push(B.signal(s)) };
 * ```
 */
export interface Signaller {
  signal(s: B.Syscall): void;
}

const IDLE = 0;
const PARKED = 1;
const SIGNALLED = 2;

/**
 * A backend operation that may park its task. Subclasses implement
 * `attempt` (complete now, or return false), `wait` (register to be woken
 * with `ready()`), `unwait` (forget that registration), and optionally
 * `handoff` (pass on readiness that a cancelled operation did not use).
 *
 * @example
 * ```ts
 * class AcceptOp extends Parked<Client> {
 *   constructor(loop: NodeLoop, private server: MyServer) { super(loop, "accept"); }
 *   protected attempt() {
 *     const c = this.server.pending.shift();
 *     if (c === undefined) return false;
 *     this.value = c;
 *     return true;
 *   }
 *   protected wait() { this.server.acceptors.push(this); }      // the server calls op.ready() later
 *   protected unwait() { remove(this.server.acceptors, this); }
 *   protected handoff() { this.server.wakeNextAcceptor(); }
 * }
 * ```
 * @throws TypeError (from `yield*`) when one operation object is run by two tasks at once;
 * `Cancelled` when the task is cancelled while parked; `Timeout` when a `withTimeout`
 * deadline interrupts it (or had passed when it started); whatever `attempt` throws.
 */
export abstract class Parked<T> implements B.Operation<T>, Iterator<B.Instruction, T, unknown> {
  /** The result, set by `attempt` before it returns true. */
  protected value: T = undefined as T;
  private phase = IDLE;
  private syscall: B.Syscall | null = null;
  /** The task the suspension point belongs to (an operation object may be reused by another task). */
  private owner: B.Task<unknown> | null = null;
  /** Reused for every completion: `yield*` reads it at once. */
  private readonly result: IteratorReturnResult<T> = { done: true, value: undefined as T };

  constructor(
    /** The backend's loop (e.g. a `NodeLoop`), which hands ready points to the scheduler. */
    protected readonly loop: Signaller,
    /** Names the suspension point in error messages. */
    private readonly label: string,
  ) {}

  /**
   * Tries to complete now: sets `this.value` and returns true, throws on
   * failure, or returns false to wait. Runs in the task's fiber.
   */
  protected abstract attempt(): boolean;

  /** Registers the operation so that the backend calls `ready()` when it may go on. May call `ready()` at once. */
  protected abstract wait(): void;

  /** Forgets the registration made by `wait` (the operation was cancelled or timed out before `ready()`). */
  protected abstract unwait(): void;

  /** The operation was woken by `ready()` but will not use that readiness (cancelled, timed out): pass it on. */
  protected handoff(): void {}

  /**
   * The operation is over (completed, failed or abandoned). Override it to
   * recycle the operation object; it may run again afterwards, from any task.
   */
  protected finished(): void {}

  /** Whether the operation is registered and waiting for `ready()`. */
  get waiting(): boolean {
    return this.phase === PARKED;
  }

  /**
   * For the backend: the operation may go on. Only the first call after a
   * `wait` counts; the backend should drop the operation from its
   * registrations before or when calling it.
   */
  ready(): void {
    if (this.phase !== PARKED) return;
    this.phase = SIGNALLED;
    this.loop.signal(this.syscall!);
  }

  [Symbol.iterator](): this {
    return this;
  }

  /** The `yield*` protocol: start (`resumed === undefined`) or resumption. */
  next(resumed?: unknown): IteratorResult<B.Instruction, T> {
    if (resumed === undefined) {
      if (this.phase !== IDLE) {
        throw new TypeError(`${this.label}: this operation is already in progress in another task; make a new one for each use`);
      }
      try {
        checkTimeouts();
      } catch (error) {
        this.finished();
        throw error;
      }
    } else {
      this.phase = IDLE;
    }
    for (;;) {
      let done: boolean;
      try {
        done = this.attempt();
      } catch (error) {
        this.finished();
        throw error;
      }
      if (done) {
        const result = this.result;
        result.value = this.value;
        this.value = undefined as T;
        this.finished();
        return result;
      }
      let s = this.syscall;
      const task = B.self();
      if (s === null || this.owner !== task) {
        s = this.syscall = B.syscall(this.label);
        this.owner = task;
      }
      this.phase = PARKED;
      this.wait();
      const r = B.suspend(s)[Symbol.iterator]().next();
      if (r.done !== true) return r as IteratorYieldResult<B.Instruction>;
      // Reported ready before the task parked: try again.
      this.phase = IDLE;
    }
  }

  /** A cancellation (or `withTimeout`'s interruption) thrown into the task while it waits here. */
  throw(error: unknown): IteratorResult<B.Instruction, T> {
    this.abandon();
    throw error;
  }

  /** The task's fiber was closed while it waited here. */
  return(value?: T): IteratorResult<B.Instruction, T> {
    this.abandon();
    return { done: true, value: value as T };
  }

  private abandon(): void {
    if (this.phase === PARKED) this.unwait();
    else if (this.phase === SIGNALLED) this.handoff();
    this.phase = IDLE;
    // Core marked the suspension point cancelled: never park on it again.
    this.syscall = null;
    this.owner = null;
    this.finished();
  }
}
