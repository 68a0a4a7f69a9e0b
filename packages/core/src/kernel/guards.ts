/**
 * Guards around code the kernel calls but does not own: tick hooks, exit
 * hooks, a tracer, `onCancellation` handlers, the `detach` of what a task
 * waits on. What escapes one fails the run with `CallbackFailed` naming its
 * source (see life.ts); the kernel goes on as if the code had returned.
 * (The scheduling policy's guard is in policy.ts, the events backend's in
 * the driver that runs it, syscall.ts.)
 */
import { CallbackFailed } from "../errors.js";
import type { Ending } from "./hooks.js";
import type { Host } from "./host.js";
import type { Family, State, Task, Waiter } from "./task.js";
import type { TracePoint } from "./trace.js";

const ENDINGS: readonly Ending[] = ["resolved", "resolved", "failed", "cancelled"];

/** @internal Runs the tick hooks; one that throws is removed and fails the run. */
export function runTickHooks(k: Host): void {
  const hooks = k.tickHooks;
  for (let i = 0; i < hooks.length; i++) {
    const hook = hooks[i]!;
    try {
      hook.fn();
    } catch (error) {
      hooks.splice(i--, 1);
      k.stepsChanged();
      k.life.callbackFailed(`the tick hook ${hook.fn.name || "(anonymous)"} (Hook.add)`, error);
    }
  }
}

/** @internal Reports a trace point to the tracer (call only when `k.tracer` is set). */
export function trace(k: Host, point: TracePoint, task: Task, parent?: Task): void {
  const tracer = k.tracer!;
  try {
    // A case per point: a load of a named method at each is cheaper than `tracer[point]` of a varying key.
    switch (point) {
      case "spawn":
        tracer.spawn?.(task, parent!);
        break;
      case "start":
        tracer.start?.(task);
        break;
      case "suspend":
        tracer.suspend?.(task);
        break;
      case "resume":
        tracer.resume?.(task);
        break;
      case "cancel":
        tracer.cancel?.(task);
        break;
      case "end":
        tracer.end?.(task);
        break;
    }
  } catch (error) {
    k.life.callbackFailed(`the tracer's ${point}`, error);
  }
}

/** @internal What `waiter` says its task waits on, in words (its `describe`, which the kernel does not own). */
export function describeWaiter(waiter: Waiter): string {
  try {
    return waiter.describe?.() ?? "an operation that does not say what it waits on";
  } catch (error) {
    return `an operation whose describe() threw (${String(error)})`;
  }
}

/** @internal Tells a waiter that its task leaves (cancelled or interrupted). */
export function detach(k: Host, task: Task, waiter: Waiter): void {
  try {
    waiter.detach(task);
  } catch (error) {
    k.life.callbackFailed(`the operation ${task} waited on, when it was woken to leave`, error);
  }
}

/** @internal Runs the `onCancellation` handlers of the task's `protect` frames, innermost first. */
export function runCancellationHandlers(k: Host, task: Task, cold: Family): void {
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
export function runExitHooks(k: Host, task: Task, state: State): unknown[] | null {
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
