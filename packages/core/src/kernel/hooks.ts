/**
 * The hooks a kernel runs: tick hooks (`Hook.add`), per kernel, and exit
 * hooks (`onExit`), which every kernel of a thread is handed. They are code
 * the kernel does not own: guards.ts runs them.
 */
import type { Task } from "./task.js";

/** @internal A tick hook (`Hook.add`): run before every step of its kernel. */
export interface TickHook {
  readonly fn: () => void;
}

/**
 * How a task ended, as exit hooks see it.
 *
 * @example
 * ```ts
 * L.onExit((task, ending) => { if (ending === "failed") failures++; return undefined; });
 * ```
 */
export type Ending = "resolved" | "failed" | "cancelled";

/**
 * Runs when a task and its subtree have ended. Returning (or throwing) an
 * error vetoes a normal ending: the task fails with it and so does the run.
 * After a failure or a cancellation, an error it returns (a finaliser's, say)
 * is not lost either: it joins the task's outcome (a cancelled task fails
 * with it; a failed one reports it after its own error, in a `Failures`).
 *
 * @example
 * ```ts
 * const hook: L.ExitHook = (task, ending) => (ending === "resolved" && leaks(task) ? new Error(`${task} leaked`) : undefined);
 * L.onExit(hook);
 * ```
 */
export type ExitHook = (task: Task, ending: Ending) => unknown;
