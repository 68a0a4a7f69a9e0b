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

export { awaitAll, awaitExn, awaitFirst, awaitOne, awaitTask, type ResultOfAny, type Results } from "./await.js";
export { type Bridge, BridgeClosed, bridge } from "./bridge.js";
export { cancel } from "./cancel.js";
export { all, any, type OperationValue, type OperationValues, race } from "./combinators.js";
export { Context, type ContextOptions, createContext } from "./context.js";
export { channels } from "./diagnostics/channels.js";
export { type ChromeTrace, type ChromeTraceEvent, chromeTrace } from "./diagnostics/chrome-trace.js";
export { dump } from "./diagnostics/dump.js";
export type { Dump, TaskDump, TaskState } from "./diagnostics/dump-data.js";
export { formatDump, formatFlight } from "./diagnostics/format.js";
export { type DomainStats, stats } from "./diagnostics/stats.js";
export { Domain, self } from "./domain.js";
export { type CallOptions, call, parallel } from "./domains/call.js";
export { defineTask, type ParallelTask } from "./domains/define-task.js";
export { defineError } from "./domains/error-classes.js";
export { definePortable, type Portable } from "./domains/portable.js";
export {
  BobbinError,
  CallbackFailed,
  Cancelled,
  type ChildOutcome,
  Deadlock,
  DomainUnresponsive,
  EventOverflow,
  Failures,
  InternalError,
  NoDomainAvailable,
  NoSelectProvided,
  NotAChild,
  NotOwner,
  ResourceLeaked,
  StillHasChildren,
  Uncloneable,
} from "./errors.js";
export { type EmitterLike, type EventSource, EventStream, type OnOptions, on, once } from "./events-interop.js";
export { type ForEachOptions, forEach, map } from "./for-each.js";
export { Group, type GroupOptions, type GroupSpawnOptions, group } from "./group.js";
export type { DomainFlight, FlightEvent, FlightEventKind, FlightTask } from "./kernel/flight.js";
export { Task, type TaskStatus } from "./kernel/task.js";
export { TaskLocal } from "./local.js";
export type { Instruction, Operation, TaskBody } from "./operation.js";
export { care, drain, get, type Orphans, orphans, take } from "./orphans.js";
export { abortSignal, promise } from "./promise.js";
export { type ProtectHandlers, protect } from "./protect.js";
export type { Received } from "./received.js";
export type { Result } from "./result.js";
export { run } from "./run.js";
export type { RunOptions } from "./run-options.js";
export { type CaseValue, type Selected, select } from "./select.js";
export { spawn } from "./spawn.js";
export type { SpawnOptions } from "./spawn-options.js";
export { timeout } from "./timeout.js";
export { yieldIfDue, yieldNow } from "./yield.js";
