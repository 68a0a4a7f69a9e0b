/**
 * `protect`: cleanup that also hears about cancellation (Miou's `protect`).
 */
import type { Instruction, TaskBody } from "./operation.js";
import { currentTask } from "./scheduler.js";
import { startFiber } from "./spawn.js";
import { F, type ProtectFrame } from "./task.js";

/** Handlers of {@link protect}. */
export interface ProtectHandlers {
  /** Runs synchronously the moment a cancellation reaches the task, before `Cancelled` is thrown into `fn`. */
  readonly onCancellation?: () => void;
  /** Runs when `fn` ends in any way; `cancelled` says whether the task is being cancelled. */
  readonly finally?: (cancelled: boolean) => void;
}

/**
 * Runs `fn(...args)` in the current task with Miou's cleanup order: when the
 * task is cancelled, `onCancellation` runs first (at once, even while `fn` is
 * suspended), then `Cancelled` unwinds `fn`, then `finally(true)` runs. When
 * `fn` returns or throws, `finally(false)` runs.
 *
 * @example
 * ```ts
 * const n = yield* B.protect(
 *   { onCancellation: () => sock.destroy(), finally: () => log("done") },
 *   function* () { return yield* readAll(sock); },
 * );
 * ```
 * @throws whatever `fn` throws; `Cancelled` when the task is cancelled.
 * @throws TypeError outside a task or when `fn` is not a generator function.
 */
export function* protect<A extends unknown[], T>(
  handlers: ProtectHandlers,
  fn: TaskBody<A, T>,
  ...args: A
): Generator<Instruction, T, unknown> {
  const task = currentTask("protect()");
  const gen = startFiber(fn, args, "protect") as Generator<Instruction, T, unknown>;
  const extra = task.getExtra();
  const frame: ProtectFrame = { onCancellation: handlers?.onCancellation, outer: extra.protection };
  extra.protection = frame;
  try {
    return yield* gen;
  } finally {
    extra.protection = frame.outer;
    handlers?.finally?.((task.flags & F.CANCEL_REQUESTED) !== 0);
  }
}
