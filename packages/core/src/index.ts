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
export { run, type RunOptions } from "./run.js";
export { spawn } from "./spawn.js";
export { awaitTask, awaitTask as await, awaitExn, awaitAll, awaitOne, awaitFirst } from "./await.js";
export { cancel } from "./cancel.js";
export { yieldNow, yieldNow as yield } from "./yield.js";
export { orphans, care, take, get, Orphans } from "./orphans.js";
export { syscall, suspend, signal, uid, Syscall } from "./syscall.js";
export type { Events, Signal, Uid } from "./events.js";
export { protect, type ProtectHandlers } from "./protect.js";
export { Hook, type HookKey } from "./hook.js";
export { Trigger } from "./trigger.js";
export { TaskLocal } from "./local.js";
export { onSpawn, onExit, type SpawnOptions, type SpawnHook, type ExitHook, type Ending } from "./lifecycle.js";
export { promise, abortSignal } from "./promise.js";
export { Domain, self } from "./domain.js";
export { interrupt } from "./interrupt.js";
export { defineTask, defineEvents, type ParallelTask } from "./define-task.js";
export { call, parallel, type CallOptions } from "./call.js";
export { definePortable, type Portable } from "./portable.js";
export { Task, type TaskStatus } from "./task.js";
export type { Result } from "./result.js";
export type { Operation, Instruction, TaskBody } from "./operation.js";
export {
  BobbinError,
  Cancelled,
  StillHasChildren,
  NotAChild,
  NoDomainAvailable,
  ResourceLeaked,
  NotOwner,
  NoSelectProvided,
  Deadlock,
  Uncloneable,
} from "./errors.js";
