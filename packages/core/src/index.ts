/**
 * @bobbin/core — the scheduler: fibers as generators, a task tree where no
 * child is forgotten, cancellation of whole subtrees, suspension points and
 * the events contract.
 *
 * @example
 * ```ts
 * import * as B from "@bobbin/core";
 * await B.run(function* () {
 *   const child = B.spawn(function* () { return 21 * 2; });
 *   console.log("World");
 *   return yield* B.awaitExn(child);
 * });
 * ```
 * @packageDocumentation
 */

export { awaitAll, awaitExn, awaitFirst, awaitOne, awaitTask, awaitTask as await } from "./await.js";
export { type CallOptions, call, parallel } from "./call.js";
export { cancel } from "./cancel.js";
export { defineEvents, defineTask, type ParallelTask } from "./define-task.js";
export { Domain, self } from "./domain.js";
export {
  BobbinError,
  Cancelled,
  Deadlock,
  NoDomainAvailable,
  NoSelectProvided,
  NotAChild,
  NotOwner,
  ResourceLeaked,
  StillHasChildren,
  Uncloneable,
} from "./errors.js";
export type { Events, Signal, Uid } from "./events.js";
export { Hook, type HookKey } from "./hook.js";
export { interrupt } from "./interrupt.js";
export { type Ending, type ExitHook, onExit, onSpawn, type SpawnHook, type SpawnOptions } from "./lifecycle.js";
export { TaskLocal } from "./local.js";
export type { Instruction, Operation, TaskBody } from "./operation.js";
export { care, get, Orphans, orphans, take } from "./orphans.js";
export { definePortable, type Portable } from "./portable.js";
export { abortSignal, promise } from "./promise.js";
export { type ProtectHandlers, protect } from "./protect.js";
export type { Result } from "./result.js";
export { type RunOptions, run } from "./run.js";
export { spawn } from "./spawn.js";
export { Syscall, signal, suspend, syscall, uid } from "./syscall.js";
export { Task, type TaskStatus } from "./task.js";
export { Trigger } from "./trigger.js";
export { yieldNow, yieldNow as yield } from "./yield.js";
