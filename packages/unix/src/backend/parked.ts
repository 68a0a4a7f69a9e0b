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
 * interruption (core calls `leave` at that moment), an expired `withTimeout`
 * scope at start, a `ready()` that comes before the task parked, reuse of one
 * operation object for many calls, and no Promise or closure per operation.
 */
import type * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { checkTimeouts } from "./check-timeouts.js";

/**
 * The result of every completion, of every operation: `yield*` reads it at
 * once, before anything else runs, so one object serves them all (an
 * operation kept by an idle socket holds none).
 */
const RESULT: IteratorReturnResult<unknown> = { done: true, value: undefined };

/** Not in use. */
const IDLE = 0;
/** Handed out for one use (`claim`), not started yet. */
const CLAIMED = 1;
/** In `attempt`. */
const ATTEMPTING = 2;
/** In `wait`: a `ready()` now means "attempt again" rather than "wake the task". */
const REGISTERING = 3;
/** `ready()` came while registering. */
const READY_EARLY = 4;
/** The task is parked, or it left (cancelled, interrupted) while parked: then `isWaiting` is false. */
const PARKED = 5;
/** `ready()` woke the task: its attempt comes next. */
const WOKEN = 6;
// The phase is the low bits of a field whose bits above it are a subclass's (`upperBits`).
const PHASE_BITS = 3;
const PHASE = (1 << PHASE_BITS) - 1;

/** `bits` with their phase set to `phase` (the bits above it kept). */
function withPhase(bits: number, phase: number): number {
  return (bits & ~PHASE) | phase;
}

/**
 * A backend operation that may park its task. Subclasses implement
 * `attempt` (complete now, or return false), `wait` (register to be woken
 * with `ready()`) and `leave` (forget that registration: the task left), and
 * name it with `label` — {@link Parked} takes it in its constructor; a getter
 * here is for a class whose every instance has the same name and that many
 * idle connections keep (a socket record parked in its `readChunk`), where
 * a field would cost each of them a word.
 *
 * One object may serve many calls, one at a time (a socket keeps its read
 * operation and hands it out again): `claim()` marks it in use until it is
 * over — completed, failed, or left by its task — and `busy` says whether it
 * is.
 *
 * @example
 * ```ts
 * class AcceptOp extends ParkedBase<Client> {
 *   constructor(private server: MyServer) { super(); }
 *   protected get label() { return "accept"; }
 *   protected attempt() {
 *     const c = this.server.pending.shift();
 *     if (c === undefined) return false;
 *     this.value = c;
 *     return true;
 *   }
 *   protected wait() { this.server.acceptors.add(this); }      // the server wakes it later: acceptors.wakeFirst()
 *   protected leave() { this.server.acceptors.leave(this); }
 * }
 * ```
 * @throws TypeError (from `yield*`) when one operation object is run by two tasks at once;
 * `Cancelled` when the task is cancelled while parked; `Timeout` when a `withTimeout`
 * deadline interrupts it (or had passed when it started); whatever `attempt` throws.
 */
export abstract class ParkedBase<T> extends L.Suspender<T> {
  /** The phase, and above it the subclass's bits (one field: a record that is an operation, as a socket record is, pays one word for both). */
  #bits = IDLE;

  /**
   * Bits a subclass keeps in the operation's field above its phase (a socket
   * record's flags, kind and state: a field of their own would cost every
   * connection a word). At most 2^27 - 1, so that the field stays a small integer.
   */
  protected get upperBits(): number {
    return this.#bits >>> PHASE_BITS;
  }

  protected set upperBits(bits: number) {
    this.#bits = (this.#bits & PHASE) | (bits << PHASE_BITS);
  }

  // The phase is read and written here on the field (`withPhase`), not
  // through accessors: the accessors' call sites saw the operations of many
  // classes, and V8 called them rather than inline them (twice per read and
  // per write of an echo server). A `#` accessor would also give every
  // instance a brand field.

  /** Names the operation in error messages and dumps ("read", "accept"). */
  protected abstract get label(): string;

  /**
   * Tries to complete now: sets `this.value` and returns true, throws on
   * failure, or returns false to wait. Runs in the task's fiber.
   */
  protected abstract attempt(): boolean;

  /** Registers the operation so that the backend calls `ready()` when it may go on. May call `ready()` at once. */
  protected abstract wait(): void;

  /**
   * The task left without being woken (it was cancelled, or a `withTimeout`
   * deadline interrupted it): forget the registration made by `wait`. Runs
   * at that moment, outside the task's fiber.
   */
  protected abstract override leave(): void;

  /**
   * The operation ended in its task: it completed, or `attempt` threw.
   * Override it to let go of what one call held (the caller's buffer, a
   * turn on the socket); a task that leaves gets `leave` instead.
   */
  protected finished(): void {}

  /**
   * The result, set by `attempt` before it returns true. It is the shared
   * completion's own (`yield*` reads it at once), not a field: an operation
   * parked on an idle connection holds no result.
   */
  protected get value(): T {
    return RESULT.value as T;
  }

  protected set value(value: T) {
    RESULT.value = value;
  }

  /** Whether the operation is in use: claimed, running, or parked (and not left). */
  get busy(): boolean {
    const phase = this.#bits & PHASE;
    return phase !== IDLE && (phase !== PARKED || this.isWaiting);
  }

  /**
   * Marks the operation in use for one call, until it is over: a socket
   * that keeps an operation hands it out again only while it is not `busy`.
   * @throws never
   */
  protected claim(): this {
    this.#bits = withPhase(this.#bits, CLAIMED);
    return this;
  }

  /**
   * For the backend: the operation may go on. Only the first call after a
   * `wait` counts; the backend should drop the operation from its
   * registrations before or when calling it.
   */
  ready(): void {
    const phase = this.#bits & PHASE;
    if (phase === REGISTERING) this.#bits = withPhase(this.#bits, READY_EARLY);
    else if (phase === PARKED) {
      this.#bits = withPhase(this.#bits, WOKEN);
      if (!this.wake()) this.#bits = withPhase(this.#bits, IDLE); // it had left
    }
  }

  /** Starts: fails at once when a `withTimeout` scope has expired, else attempts. */
  protected start(): IteratorResult<B.Instruction, T> {
    if (this.busy && (this.#bits & PHASE) !== CLAIMED) {
      throw new TypeError(`${this.label}: this operation is already in progress in another task; make a new one for each use`);
    }
    try {
      checkTimeouts();
    } catch (error) {
      this.#bits = withPhase(this.#bits, IDLE);
      this.finished();
      throw error;
    }
    return this.attemptOrPark();
  }

  /** Woken: attempts again. */
  protected resume(): IteratorResult<B.Instruction, T> {
    return this.attemptOrPark();
  }

  /** What the task waits on, in words. */
  override describe(): string {
    return this.label;
  }

  /**
   * @internal Attempts, and parks when that fails. TypeScript-private, not a
   * `#` method: a class with `#` methods gives each instance a brand field, a
   * word every operation parked on an idle connection would pay.
   */
  private attemptOrPark(): IteratorResult<B.Instruction, T> {
    for (;;) {
      this.#bits = withPhase(this.#bits, ATTEMPTING);
      let done: boolean;
      try {
        done = this.attempt();
      } catch (error) {
        this.#bits = withPhase(this.#bits, IDLE);
        this.finished();
        throw error;
      }
      if (done) {
        this.#bits = withPhase(this.#bits, IDLE);
        this.finished();
        return RESULT as IteratorReturnResult<T>;
      }
      this.#bits = withPhase(this.#bits, REGISTERING);
      this.wait();
      if ((this.#bits & PHASE) === READY_EARLY) continue; // ready before the task parked: try again
      this.#bits = withPhase(this.#bits, PARKED);
      return this.suspend();
    }
  }
}

/**
 * A {@link ParkedBase} named by its constructor's label: the usual base of a
 * backend's operations (one class may serve several, as `OpenOp` serves
 * `bindAndListen` and `connect`).
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
 *   protected wait() { this.server.acceptors.add(this); }      // the server wakes it later: acceptors.wakeFirst()
 *   protected leave() { this.server.acceptors.leave(this); }
 * }
 * ```
 * @throws as {@link ParkedBase}.
 */
export abstract class Parked<T> extends ParkedBase<T> {
  readonly #label: string;

  /** @param label names the operation in error messages and dumps ("read", "accept"). */
  constructor(label: string) {
    super();
    this.#label = label;
  }

  protected get label(): string {
    return this.#label;
  }
}
