/**
 * @bobbin/core/lowlevel — what runtimes, backends and packages built on core
 * use, and a program does not: Miou's events contract and its suspension
 * points, the building blocks of waiting operations and of `select`'s cases,
 * the seams of a run (scheduling, randomness, tracing, tick hooks, spawn and
 * exit hooks, context values given from outside a task's body, abandoning a
 * run whose tasks can never end) and system tasks. A program imports `@bobbin/core`.
 *
 * @example
 * ```ts
 * import * as B from "@bobbin/core";
 * import * as L from "@bobbin/core/lowlevel";
 * await B.run(function* () {
 *   const ready = new L.Trigger();
 *   const child = B.spawn(function* () { ready.signal(); });
 *   yield* ready.wait();
 *   yield* B.awaitExn(child);
 * });
 * ```
 * @packageDocumentation
 */

export { abandon } from "../abandon.js";
export { currentEvents } from "../current-events.js";
export { registerInterrupter } from "../deadlock/cycles.js";
export { describe } from "../describe.js";
export { defineEvents } from "../domains/define-events.js";
export { done } from "../done.js";
export type { Events, Signal, Uid } from "../events.js";
export { giveContext } from "../give-context.js";
export { Hook, type HookKey } from "../hook.js";
export { interrupt } from "../interrupt.js";
export type { SchedulingPolicy } from "../kernel/policy.js";
export type { RandomSource } from "../kernel/random.js";
export { keepShapes } from "../kernel/shapes.js";
export type { Tracer } from "../kernel/trace.js";
export { type Ending, type ExitHook, givable, onExit, onSpawn, type SpawnHook } from "../lifecycle.js";
export { checkOptionNames } from "../option-names.js";
export { park, unpark } from "../park.js";
export {
  checkRunOptionNames,
  type KernelRunOptions,
  kernelSeamNames,
  maxDomains,
  type RunDefaults,
  runDefaults,
  runKernel,
  runOptionNames,
} from "../run-kernel.js";
export { Choice, SelectCase } from "../select.js";
export { Suspender } from "../suspender.js";
export { Syscall, signal, suspend, syscall, uid } from "../syscall.js";
export { spawnSystem } from "../system-task.js";
export { Trigger } from "../trigger.js";
