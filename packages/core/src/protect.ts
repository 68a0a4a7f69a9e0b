/**
 * `protect`: cleanup that also hears about cancellation (Miou's `protect`).
 */

import { describe } from "./describe.js";
import { Cancelled, failureOf } from "./errors.js";
import { currentTask } from "./kernel/current.js";
import { isCancelRequested } from "./kernel/state.js";
import type { ProtectFrame } from "./kernel/task.js";
import { familyOf } from "./kernel/tree.js";
import type { Instruction, TaskBody } from "./operation.js";
import { startFiber } from "./spawn.js";

/**
 * Handlers of {@link protect}.
 *
 * @example
 * ```ts
 * yield* B.protect({ onCancellation: () => sock.destroy(), finally: (cancelled) => log(cancelled) }, body);
 * ```
 */
export interface ProtectHandlers {
  /**
   * Runs synchronously the moment a cancellation reaches the task, before
   * `Cancelled` is thrown into `fn`. If it throws, the task is still
   * cancelled and the run fails with `CallbackFailed`.
   */
  readonly onCancellation?: () => void;
  /**
   * Runs when `fn` ends in any way; `cancelled` says whether the task is being
   * cancelled. If it throws, its error is not lost: it replaces `fn`'s value
   * or `Cancelled`, or follows `fn`'s own error in a `Failures`.
   */
  readonly finally?: (cancelled: boolean) => void;
}

const NO_ERROR = Symbol("no error");

/**
 * Runs `fn(...args)` in the current task with Miou's cleanup order: when the
 * task is cancelled, `onCancellation` runs first (at once, even while `fn` is
 * suspended), then `Cancelled` unwinds `fn`, then `finally(true)` runs. When
 * `fn` returns or throws, `finally(false)` runs.
 *
 * An error thrown by `finally` is never lost, and never hides another: it is
 * what `protect` throws when `fn` returned or was cancelled (the task being
 * cancelled then fails with it rather than ending `Cancelled`), and follows
 * `fn`'s error in a `B.Failures` when `fn` threw.
 *
 * @example
 * ```ts
 * const n = yield* B.protect(
 *   { onCancellation: () => sock.destroy(), finally: () => log("done") },
 *   function* () { return yield* readAll(sock); },
 * );
 * ```
 * @throws whatever `fn` throws; `Cancelled` when the task is cancelled;
 * what `finally` throws (after `fn`'s error, in a `Failures`, when both threw).
 * @throws TypeError outside a task, when `handlers` is not an object of
 * functions, or when `fn` is not a task body (`B.TaskBody`).
 */
export function* protect<A extends unknown[], T>(
  handlers: ProtectHandlers,
  fn: TaskBody<A, T>,
  ...args: A
): Generator<Instruction, T, unknown> {
  const task = currentTask("protect()");
  checkHandlers(handlers);
  const gen = startFiber(fn, args, "protect") as Generator<Instruction, T, unknown>;
  const family = familyOf(task);
  const frame: ProtectFrame = { onCancellation: handlers.onCancellation, outer: family.protection };
  family.protection = frame;
  let thrown: unknown = NO_ERROR;
  try {
    return yield* gen;
  } catch (error) {
    thrown = error;
    throw error;
  } finally {
    family.protection = frame.outer;
    runFinally(handlers, isCancelRequested(task), thrown);
  }
}

/** Runs the `finally` handler; what it throws is thrown with `fn`'s error first, if `fn` failed (a `Cancelled` gives way). */
function runFinally(handlers: ProtectHandlers, cancelled: boolean, thrown: unknown): void {
  try {
    handlers.finally?.(cancelled);
  } catch (error) {
    throw thrown === NO_ERROR || thrown instanceof Cancelled ? error : failureOf([thrown, error]);
  }
}

function checkHandlers(handlers: unknown): asserts handlers is ProtectHandlers {
  if (handlers === null || typeof handlers !== "object") {
    throw new TypeError(`protect(handlers, fn) expects handlers { onCancellation?, finally? } first, got ${describe(handlers)}`);
  }
  for (const key of ["onCancellation", "finally"] as const) {
    const h = (handlers as Record<string, unknown>)[key];
    if (h !== undefined && typeof h !== "function") throw new TypeError(`protect({ ${key} }) expects a function, got ${describe(h)}`);
  }
}
