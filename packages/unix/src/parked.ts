/**
 * `Parked`: the base class of backend operations that may have to wait.
 *
 * An operation tries to complete in the fiber (`attempt`); when it cannot, it
 * registers with the backend (`wait`) and parks its task; the backend calls
 * `ready()` from a Node callback when it may go on, which wakes the task
 * directly (core's `Suspender`: no `select` round trip, one microtask at most
 * per batch of readiness), and the operation tries again in the fiber. That
 * is edge-triggered readiness: data, connections and datagrams stay with the
 * socket until a fiber takes them. A woken task always runs its attempt (a
 * cancellation that arrives meanwhile waits for its next suspension), so no
 * readiness is ever dropped.
 *
 * `Parked` handles the rest of the contract: cancellation and `withTimeout`'s
 * interruption (core calls `unwait` at that moment), an expired `withTimeout`
 * scope at start, a `ready()` that comes before the task parked, and no
 * Promise or closure per operation.
 */
import type * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { checkTimeouts } from "./timeout.js";

/**
 * Removes a parked operation from a backend's waiting list (its `unwait`);
 * returns whether it was there. Lists of waiters are short (usually one).
 *
 * @example
 * ```ts
 * protected unwait() { removeWaiter(this.sock.readers, this); }
 * ```
 * @throws never.
 */
export function removeWaiter<W>(list: W[], op: W): boolean {
  const i = list.indexOf(op);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}

/**
 * Calls `ready()` on every operation of a backend's waiting list and empties
 * the list: each operation tries again in its own fiber (the socket closed,
 * or the stream ended, for all of them at once).
 *
 * @example
 * ```ts
 * close(sock) { sock.closed = true; wakeAll(sock.readers); } // each reader's attempt throws SocketClosed
 * ```
 * @throws never
 */
export function wakeAll(list: Parked<unknown>[]): void {
  if (list.length === 0) return;
  for (const op of list.splice(0)) op.ready();
}

const IDLE = 0;
/** `wait` runs: a `ready()` now means "try again" rather than "wake the task". */
const REGISTERING = 1;
const READY_EARLY = 2;
const PARKED = 3;

/**
 * A backend operation that may park its task. Subclasses implement
 * `attempt` (complete now, or return false), `wait` (register to be woken
 * with `ready()`) and `unwait` (forget that registration).
 *
 * @example
 * ```ts
 * class AcceptOp extends Parked<Client> {
 *   constructor(private server: MyServer) { super("accept"); }
 *   protected attempt() {
 *     const c = this.server.pending.shift();
 *     if (c === undefined) return false;
 *     this.value = c;
 *     return true;
 *   }
 *   protected wait() { this.server.acceptors.push(this); }      // the server calls op.ready() later
 *   protected unwait() { remove(this.server.acceptors, this); }
 * }
 * ```
 * @throws TypeError (from `yield*`) when one operation object is run by two tasks at once;
 * `Cancelled` when the task is cancelled while parked; `Timeout` when a `withTimeout`
 * deadline interrupts it (or had passed when it started); whatever `attempt` throws.
 */
export abstract class Parked<T> extends L.Suspender<T> {
  /** The result, set by `attempt` before it returns true. */
  protected value: T = undefined as T;
  private phase = IDLE;
  /** Reused for every completion: `yield*` reads it at once. */
  private readonly result: IteratorReturnResult<T> = { done: true, value: undefined as T };

  constructor(
    /** Names the operation in error messages and diagnostics. */
    private readonly label: string,
  ) {
    super();
  }

  /**
   * Tries to complete now: sets `this.value` and returns true, throws on
   * failure, or returns false to wait. Runs in the task's fiber.
   */
  protected abstract attempt(): boolean;

  /** Registers the operation so that the backend calls `ready()` when it may go on. May call `ready()` at once. */
  protected abstract wait(): void;

  /** Forgets the registration made by `wait` (the task was cancelled or timed out before `ready()`). */
  protected abstract unwait(): void;

  /**
   * The operation is over (completed, failed or abandoned). Override it to
   * recycle the operation object; it may run again afterwards, from any task.
   */
  protected finished(): void {}

  /** Whether the operation is registered and waiting for `ready()`. */
  get waiting(): boolean {
    return this.phase === PARKED || this.phase === REGISTERING;
  }

  /**
   * For the backend: the operation may go on. Only the first call after a
   * `wait` counts; the backend should drop the operation from its
   * registrations before or when calling it.
   */
  ready(): void {
    if (this.phase === REGISTERING) this.phase = READY_EARLY;
    else if (this.phase === PARKED) {
      this.phase = IDLE;
      this.wake();
    }
  }

  /** Starts: fails at once when a `withTimeout` scope has expired, else attempts. */
  protected start(): IteratorResult<B.Instruction, T> {
    if (this.phase !== IDLE) {
      throw new TypeError(`${this.label}: this operation is already in progress in another task; make a new one for each use`);
    }
    try {
      checkTimeouts();
    } catch (error) {
      this.finished();
      throw error;
    }
    return this.attemptOrPark();
  }

  /** Woken: attempts again. */
  protected resume(): IteratorResult<B.Instruction, T> {
    return this.attemptOrPark();
  }

  /** The task was cancelled or timed out while parked here. */
  protected leave(): void {
    this.phase = IDLE;
    this.unwait();
    this.finished();
  }

  /** What the task waits on, in words. */
  override describe(): string {
    return this.label;
  }

  private attemptOrPark(): IteratorResult<B.Instruction, T> {
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
      this.phase = REGISTERING;
      this.wait();
      if (this.phase === READY_EARLY) {
        this.phase = IDLE;
        continue; // ready before the task parked: try again
      }
      this.phase = PARKED;
      return this.suspend();
    }
  }
}
