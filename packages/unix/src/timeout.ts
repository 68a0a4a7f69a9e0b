/**
 * `withTimeout` (µthreads' `timeout`): run an operation in the current task
 * with a deadline. When the deadline passes, the wait the task is in — any
 * wait: I/O, a sleep, a child, a `Mutex`, a `Trigger`, a Promise — is
 * interrupted with {@link Timeout} (core's `interrupt`: its registration is
 * cleaned up as for a cancellation, but the task is not cancelled); if the
 * task was running, its next wait is. Every later I/O operation inside the
 * scope then fails the same way at once, until the scope is left. A nested
 * timeout that cannot fire before an enclosing one is not armed at all.
 */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { currentBackend, currentTaskFor } from "./context.js";
import type { Backend, DeadlineHandle } from "./contract.js";
import { Timeout } from "./errors.js";

/** The timeout scopes of one task. */
class TaskTimeouts {
  /** The innermost armed scope. */
  top: Scope | null = null;
  /** The error of the outermost scope that expired, until that scope is left. */
  expired: Timeout | null = null;
  /** Closes under way (see `despiteExpiry`): an expired scope does not fail them at their start. */
  closing = 0;
}

class Scope {
  /**
   * Made when the deadline passes, not when the scope is armed: an error
   * captures a stack as it is made, which costs more than the rest of an arm,
   * and most scopes never fire (an idle timeout around every read). Its
   * stack is captured as it leaves the scope (see `timed`).
   */
  error: Timeout | null = null;
  /** The deadline, then the retries of an interruption that found the task running. */
  handle: DeadlineHandle | null = null;
  fired = false;
  left = false;
  readonly fire = (): void => {
    this.handle = null;
    if (this.left) return;
    this.fired = true;
    this.error = unplacedTimeout(this.seconds, this.source);
    this.rec.expired = this.error; // a later deadline is an enclosing scope's: it wins
    this.interrupt();
  };
  /** Interrupts the task's wait; when it is not waiting (running or ready to run), tries again at the next turn. */
  private readonly interrupt = (): void => {
    this.handle = null;
    const error = this.rec.expired;
    if (this.left || error === null) return;
    if (L.interrupt(this.task, error) || this.task.status !== "pending") return;
    this.handle = this.backend.deadline(this.backend.now(), this.interrupt);
  };

  constructor(
    readonly at: number,
    private readonly seconds: number,
    private readonly source: string,
    readonly outer: Scope | null,
    readonly rec: TaskTimeouts,
    private readonly task: B.Task<unknown>,
    private readonly backend: Backend,
  ) {}
}

/**
 * A Timeout with no stack yet: made by the deadline's callback, its stack
 * would show only the backend's timers, not the task it stops.
 */
function unplacedTimeout(seconds: number, source: string): Timeout {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new Timeout(seconds, source);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

const timeouts = new B.TaskLocal<TaskTimeouts>("@bobbin/unix timeouts", () => new TaskTimeouts());
/** Armed scopes on this thread: while 0, operations skip every timeout check. */
let activeScopes = 0;

function recordOf(task: B.Task<unknown>): TaskTimeouts | null {
  return timeouts.has(task) ? timeouts.get(task) : null;
}

// A task waiting inside an armed scope is in no deadlock: its deadline will interrupt the wait.
L.registerInterrupter((task) => (recordOf(task)?.top ?? null) !== null);

/**
 * @internal The expired timeout of the current task, if it is inside a
 * `withTimeout` scope whose deadline passed (and not in a close): what the
 * kit's `checkTimeouts` throws.
 */
export function expiredTimeout(): Timeout | null {
  if (activeScopes === 0) return null;
  const rec = recordOf(B.self());
  return rec !== null && rec.closing === 0 ? rec.expired : null;
}

/**
 * @internal Runs `op`, a close, so that an expired `withTimeout` scope does
 * not fail it at its start: a close must always close (the socket would stay
 * open otherwise, in the very `finally` meant to close it), and in Miou a
 * close is a plain system call, never where a timeout shows. The scope's
 * Timeout is thrown by the next operation that can wait. A deadline that
 * passes while the close waits for the system handle to go still interrupts
 * that wait: the socket is closed by then.
 */
export function* despiteExpiry<T>(op: B.Operation<T>): Generator<B.Instruction, T, unknown> {
  const rec = activeScopes === 0 ? null : recordOf(B.self());
  if (rec === null) return yield* op;
  rec.closing++;
  try {
    return yield* op;
  } finally {
    rec.closing--;
  }
}

/**
 * Runs `op` in the current task with a deadline `seconds` from now. If the
 * deadline passes first, the wait the task is in throws {@link Timeout}
 * (whatever it waits for: I/O, `sleep`, a child, a lock, a Promise; if the
 * task is running, its next wait), as does any later I/O operation inside
 * the scope; it propagates out of `withTimeout` unless `op` catches it. The
 * task is not cancelled: its children keep running (await or cancel them). A
 * timeout nested in one that expires no later is not armed (µthreads'
 * `is_valid_timeout`). `op` is an operation, or a function returning one
 * (such as a generator function). Works in every domain.
 *
 * `source` names the deadline in the Timeout's message and its `source`
 * field (default `"withTimeout"`): a function that bounds its work with a
 * timeout of its own names it, so that it tells its own Timeout from one
 * its work threw (an enclosing scope's, or a Timeout of the work's own with
 * the same seconds) by `error.source`, not by comparing seconds.
 *
 * @example
 * ```ts
 * const n = yield* withTimeout(2, read(sock, buf));
 * yield* withTimeout(5, function* () {
 *   yield* connect(sock, { host: "127.0.0.1", port: 8080 });
 *   yield* write(sock, request);
 * });
 * try {
 *   yield* withTimeout(3, handshake(sock), "handshake's timeout");
 * } catch (e) {
 *   if (e instanceof Timeout && e.source === "handshake's timeout") throw new HandshakeTimedOut();
 *   throw e;   // a Timeout of an enclosing scope, or one the handshake threw
 * }
 * ```
 * @throws Timeout when the deadline passed.
 * @throws RangeError when `seconds` is negative or not a number.
 * @throws TypeError when `op` is not an operation or `source` not a non-empty string, or outside a task of `@bobbin/unix`'s `run`
 * (or in a worker domain with no backend: see `defineBackend`).
 * @throws whatever `op` throws.
 */
export function withTimeout<T>(seconds: number, op: B.Operation<T> | (() => B.Operation<T>), source = "withTimeout"): B.Operation<T> {
  if (typeof seconds !== "number" || Number.isNaN(seconds) || seconds < 0) {
    throw new RangeError(`withTimeout(seconds, op): seconds must be a number ≥ 0, got ${L.describe(seconds)}`);
  }
  if (
    typeof op !== "function" &&
    (op === null || typeof op !== "object" || typeof (op as B.Operation<T>)[Symbol.iterator] !== "function")
  ) {
    throw new TypeError("withTimeout(seconds, op) expects an operation (e.g. read(sock, buf)) or a generator function");
  }
  if (typeof source !== "string" || source === "")
    throw new TypeError(`withTimeout(seconds, op, source): source must be a non-empty string, got ${L.describe(source)}`);
  return timed(seconds, op, source);
}

function* timed<T>(seconds: number, op: B.Operation<T> | (() => B.Operation<T>), source: string): Generator<B.Instruction, T, unknown> {
  const operation = typeof op === "function" ? op() : op;
  if (operation === null || typeof operation !== "object" || typeof operation[Symbol.iterator] !== "function") {
    throw new TypeError("withTimeout(seconds, fn): fn must return an operation (write it as a generator function)");
  }
  if (seconds === Infinity) return yield* operation;
  const task = currentTaskFor("withTimeout()");
  const backend = currentBackend("withTimeout()");
  const at = backend.now() + seconds * 1000;
  const rec = timeouts.get(task);
  const outer = rec.top;
  if (outer !== null && outer.at <= at) return yield* operation; // cannot fire before the enclosing one
  const scope = new Scope(at, seconds, source, outer, rec, task, backend);
  rec.top = scope;
  activeScopes++;
  scope.handle = backend.deadline(at, scope.fire);
  try {
    return yield* operation;
  } catch (error) {
    // The scope's own Timeout leaves it: its stack is taken now, while the
    // frames that called withTimeout are live again, so that it begins, as
    // an error made at the arm would, where the scope was set (a Timeout
    // the operation froze keeps the stack it has: taking one would throw).
    if (scope.error !== null && error === scope.error && Object.isExtensible(error)) Error.captureStackTrace(error, timed);
    throw error;
  } finally {
    scope.left = true;
    scope.handle?.cancel();
    scope.handle = null;
    activeScopes--;
    rec.top = outer;
    // Forget this scope's expiry; an enclosing scope that expired keeps failing I/O.
    let expired: Timeout | null = null;
    for (let s = outer; s !== null; s = s.outer) if (s.fired) expired = s.error;
    rec.expired = expired;
  }
}
