/**
 * A domain's tasks as plain data: what a domain answers when a dump asks
 * (over the domain link for a worker), before `dump.ts` grafts the domains'
 * answers into one tree.
 */

import { runningTask } from "../kernel/current.js";
import type { DomainFlight } from "../kernel/flight.js";
import { describeWaiter } from "../kernel/guards.js";
import type { Kernel } from "../kernel/kernel.js";
import { isCancelRequested, isEnding, isParked, isPending, waiterOf } from "../kernel/state.js";
import type { Task } from "../kernel/task.js";
import { suspensionPoint } from "../kernel/traces.js";
import { childrenOf } from "../kernel/tree.js";
import { ageOf } from "./ages.js";
import type { TaskDump, TaskState } from "./dump-data.js";

/** @internal A task as a domain reports it: `call` names the call it waits for, to graft the other domain's subtree. */
export interface TaskSnapshot extends Omit<TaskDump, "children"> {
  readonly children: readonly TaskSnapshot[];
  readonly call?: number;
}

/** @internal What a domain reports: its tasks, and which of them serve calls of other domains. */
export interface DomainSnapshot {
  readonly domain: number;
  readonly tasks: readonly TaskSnapshot[];
  /** For each call it runs: the caller's domain, the call's id there, and the uid of the task running it. */
  readonly serving: readonly { readonly from: number; readonly id: number; readonly uid: number }[];
  /** Its flight recorder, when the run keeps one. */
  readonly flight: DomainFlight | null;
}

/** @internal Which call of another domain a parked task waits for (a domain's link knows). */
export interface CallsWaited {
  callWaitedBy(task: Task): number | undefined;
}

/**
 * @internal A snapshot of a domain's tasks; `calls` says which call a
 * parked task waits for (the domain's link, if it has one), `serving` lists
 * the tasks that run calls of other domains (a worker's).
 */
export function snapshotDomain(kernel: Kernel, calls: CallsWaited | null, serving: DomainSnapshot["serving"]): DomainSnapshot {
  const snapshot = (task: Task): TaskSnapshot => {
    const parked = isParked(task);
    const call = parked ? calls?.callWaitedBy(task) : undefined;
    const base = {
      uid: task.uid,
      name: task.name,
      domain: kernel.domainOf(task),
      state: stateOf(task),
      cancelling: isCancelRequested(task) && isPending(task),
      ageMs: ageOf(task, kernel),
      waitsOn: parked ? describeWaiter(waiterOf(task)!) : null,
      suspendedAt: parked ? suspensionPoint(task) : null,
      children: childrenOf(task).map(snapshot),
    };
    return call === undefined ? base : { ...base, call };
  };
  return { domain: kernel.domain, tasks: kernel.life.topTasks().map(snapshot), serving, flight: kernel.flight() };
}

function stateOf(task: Task): TaskState {
  if (!isPending(task)) return task.status as TaskState;
  if (task === runningTask()) return "running";
  if (isParked(task)) return "waiting";
  if (isEnding(task)) return "ending";
  return "ready";
}
