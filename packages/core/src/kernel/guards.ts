/**
 * Guards around code the kernel calls but does not own: tick hooks, exit
 * hooks, a tracer, `onCancellation` handlers, the `detach` of what a task
 * waits on. What escapes one fails the run with `CallbackFailed` naming its
 * source (see life.ts); the kernel goes on as if the code had returned.
 * (The scheduling policy's guard is in policy.ts, the events backend's in
 * the driver that runs it, syscall.ts.)
 */
import { CallbackFailed } from "../errors.js";
import type { Kernel } from "./kernel.js";
import type { State } from "./state.js";
import type { Family, Task, Waiter } from "./task.js";
import type { TracePoint } from "./trace.js";

/** @internal A tick hook (`Hook.add`): run before every step of its kernel. */
export interface TickHook {
  readonly fn: () => void;
}

/**
 * How a task ended, as exit hooks see it.
 *
 * @example
 * ```ts
 * B.onExit((task, ending) => { if (ending === "failed") failures++; return undefined; });
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
 * const hook: B.ExitHook = (task, ending) => (ending === "resolved" && leaks(task) ? new Error(`${task} leaked`) : undefined);
 * B.onExit(hook);
 * ```
 */
export type ExitHook = (task: Task, ending: Ending) => unknown;

const ENDINGS: readonly Ending[] = ["resolved", "resolved", "failed", "cancelled"];

/** @internal Runs the tick hooks; one that throws is removed and fails the run. */
export function runTickHooks(k: Kernel): void {
  const hooks = k.tickHooks;
  for (let i = 0; i < hooks.length; i++) {
    const hook = hooks[i]!;
    try {
      hook.fn();
    } catch (error) {
      hooks.splice(i--, 1);
      k.life.callbackFailed(`the tick hook ${hook.fn.name || "(anonymous)"} (Hook.add)`, error);
    }
  }
}

/** @internal Reports a trace point to the tracer (call only when `k.tracer` is set). */
export function trace(k: Kernel, point: TracePoint, task: Task, parent?: Task): void {
  const tracer = k.tracer!;
  try {
    if (point === "spawn") tracer.spawn?.(task, parent!);
    else tracer[point]?.(task);
  } catch (error) {
    k.life.callbackFailed(`the tracer's ${point}`, error);
  }
}

/** @internal Tells a waiter that its task leaves (cancelled or interrupted). */
export function detach(k: Kernel, task: Task, waiter: Waiter): void {
  try {
    waiter.detach(k, task);
  } catch (error) {
    k.life.callbackFailed(`the operation ${task} waited on, when it was woken to leave`, error);
  }
}

/** @internal Runs the `onCancellation` handlers of the task's `protect` frames, innermost first. */
export function runCancellationHandlers(k: Kernel, task: Task, cold: Family): void {
  for (let frame = cold.protection; frame !== null; frame = frame.outer) {
    const handler = frame.onCancellation;
    if (handler === undefined) continue;
    try {
      handler();
    } catch (error) {
      k.life.callbackFailed(`the onCancellation handler of protect in ${task}`, error);
    }
  }
}

/** @internal Runs the exit hooks; returns the errors they returned (or threw, as `CallbackFailed`), or null. */
export function runExitHooks(k: Kernel, task: Task, state: State): unknown[] | null {
  const hooks = k.exitHooks;
  let errors: unknown[] | null = null;
  const ending = ENDINGS[state]!;
  for (let i = 0; i < hooks.length; i++) {
    const hook = hooks[i]!;
    let answer: unknown;
    try {
      answer = hook(task, ending);
    } catch (error) {
      answer = new CallbackFailed(`the exit hook ${hook.name || "(anonymous)"} at the end of ${task}`, error);
      k.life.fail(answer);
    }
    if (answer !== undefined) (errors ??= []).push(answer);
  }
  return errors;
}
