/**
 * `withTimeout` (µthreads' `timeout`): run an operation in the current task
 * with a deadline. When the deadline passes, the I/O operation the task waits
 * in is interrupted with {@link Timeout} (its registration cleaned up, as for
 * a cancellation), and every later I/O operation inside the scope fails the
 * same way until the scope is left. A nested timeout that cannot fire before
 * an enclosing one is not armed at all.
 *
 * The operation runs in the calling task, so it may use resources the task
 * owns and children it may await; what a deadline interrupts is I/O of
 * `@bobbin/unix` (sleep, accept, connect, read, write, recvfrom, sendto,
 * close…). A wait on something else (awaiting a child, a Mutex) ends first,
 * then the next I/O operation in the scope throws `Timeout`.
 */
import * as B from "@bobbin/core";
import type { DeadlineHandle } from "./backend.js";
import { currentContext, currentTaskFor } from "./context.js";
import { Timeout } from "./errors.js";

/**
 * What a deadline interrupts: an operation parked in a backend. `interrupt`
 * makes it forget its registration and resume its task by throwing `reason`.
 *
 * @example
 * ```ts
 * class MyOp implements Interruptible { interrupt(reason: unknown) { this.unregister(); this.failWith(reason); } }
 * ```
 */
export interface Interruptible {
  interrupt(reason: unknown): void;
}

/** The timeout scopes of one task. */
class TaskTimeouts {
  /** The innermost armed scope. */
  top: Scope | null = null;
  /** The backend operation the task is parked in, when it is inside a scope. */
  parked: Interruptible | null = null;
  /** The error of the outermost scope that expired, until that scope is left. */
  expired: Timeout | null = null;
}

/**
 * An opaque token from {@link parking}, to give back to {@link unparked}.
 *
 * @example
 * ```ts
 * private watch: TimeoutWatch | null = null;
 * ```
 */
export type TimeoutWatch = TaskTimeouts;

class Scope {
  readonly error: Timeout;
  handle: DeadlineHandle | null = null;
  fired = false;
  readonly fire = (): void => {
    this.fired = true;
    const rec = this.rec;
    rec.expired = this.error; // a later deadline is an enclosing scope's: it wins
    const parked = rec.parked;
    if (parked !== null) {
      rec.parked = null;
      parked.interrupt(this.error);
    }
  };

  constructor(
    readonly at: number,
    seconds: number,
    readonly outer: Scope | null,
    readonly rec: TaskTimeouts,
  ) {
    this.error = new Timeout(seconds);
  }
}

const timeouts = new B.TaskLocal<TaskTimeouts>("@bobbin/unix timeouts", () => new TaskTimeouts());
/** Armed scopes on this thread: while 0, operations skip every timeout check. */
let activeScopes = 0;

function recordOf(task: B.Task<unknown>): TaskTimeouts | null {
  return timeouts.has(task) ? timeouts.get(task) : null;
}

/**
 * For backends: throws the expired timeout of the current task, if any. Call
 * it when an operation starts (the `Parked` base class does).
 *
 * @example
 * ```ts
 * next(resumed) { if (resumed === undefined) checkTimeouts(); … }
 * ```
 * @throws Timeout when the current task is inside a `withTimeout` scope whose deadline passed.
 */
export function checkTimeouts(): void {
  if (activeScopes === 0) return;
  const rec = recordOf(B.self());
  if (rec !== null && rec.expired !== null) throw rec.expired;
}

/**
 * For backends: the operation `op` of the current task is about to park.
 * When the task is inside a `withTimeout` scope, its deadline will call
 * `op.interrupt(timeout)`. Give the returned token to {@link unparked} when
 * the operation resumes, is cancelled or is interrupted.
 *
 * @example
 * ```ts
 * this.watch = parking(this);
 * // … resumed:
 * unparked(this, this.watch);
 * ```
 * @throws never.
 */
export function parking(op: Interruptible): TimeoutWatch | null {
  if (activeScopes === 0) return null;
  const rec = recordOf(B.self());
  if (rec === null || rec.top === null) return null;
  rec.parked = op;
  return rec;
}

/**
 * For backends: the operation registered by {@link parking} is no longer parked.
 *
 * @example
 * ```ts
 * unparked(this, this.watch); this.watch = null;
 * ```
 * @throws never.
 */
export function unparked(op: Interruptible, watch: TimeoutWatch | null): void {
  if (watch !== null && watch.parked === op) watch.parked = null;
}

/**
 * Runs `op` in the current task with a deadline `seconds` from now. If the
 * deadline passes first, the I/O operation the task is waiting in throws
 * {@link Timeout} (as does any later I/O operation inside the scope), which
 * propagates out of `withTimeout` unless `op` catches it. A timeout nested in
 * one that expires no later is not armed (µthreads' `is_valid_timeout`).
 * `op` is an operation, or a function returning one (such as a generator function).
 *
 * @example
 * ```ts
 * const n = yield* withTimeout(2, read(sock, buf));
 * yield* withTimeout(5, function* () {
 *   yield* connect(sock, { host: "127.0.0.1", port: 8080 });
 *   yield* write(sock, request);
 * });
 * ```
 * @throws Timeout when the deadline passed.
 * @throws RangeError when `seconds` is negative or not a number.
 * @throws TypeError when `op` is not an operation, or outside a task of `@bobbin/unix`'s `run`.
 * @throws whatever `op` throws.
 */
export function withTimeout<T>(seconds: number, op: B.Operation<T> | (() => B.Operation<T>)): B.Operation<T> {
  if (typeof seconds !== "number" || Number.isNaN(seconds) || seconds < 0) {
    throw new RangeError(`withTimeout(seconds, op): seconds must be a number ≥ 0, got ${String(seconds)}`);
  }
  if (typeof op !== "function" && (op === null || typeof op !== "object" || typeof (op as B.Operation<T>)[Symbol.iterator] !== "function")) {
    throw new TypeError("withTimeout(seconds, op) expects an operation (e.g. read(sock, buf)) or a generator function");
  }
  return timed(seconds, op);
}

function* timed<T>(seconds: number, op: B.Operation<T> | (() => B.Operation<T>)): Generator<B.Instruction, T, unknown> {
  const operation = typeof op === "function" ? op() : op;
  if (operation === null || typeof operation !== "object" || typeof operation[Symbol.iterator] !== "function") {
    throw new TypeError("withTimeout(seconds, fn): fn must return an operation (write it as a generator function)");
  }
  if (seconds === Infinity) return yield* operation;
  const task = currentTaskFor("withTimeout()");
  const { backend } = currentContext("withTimeout()");
  const at = backend.now() + seconds * 1000;
  const rec = timeouts.get(task);
  const outer = rec.top;
  if (outer !== null && outer.at <= at) return yield* operation; // cannot fire before the enclosing one
  const scope = new Scope(at, seconds, outer, rec);
  rec.top = scope;
  activeScopes++;
  scope.handle = backend.deadline(at, scope.fire);
  try {
    return yield* operation;
  } finally {
    scope.handle.cancel();
    activeScopes--;
    rec.top = outer;
    if (rec.parked !== null && outer === null) rec.parked = null;
    // Forget this scope's expiry; an enclosing scope that expired keeps failing I/O.
    let expired: Timeout | null = null;
    for (let s = outer; s !== null; s = s.outer) if (s.fired) expired = s.error;
    rec.expired = expired;
  }
}
