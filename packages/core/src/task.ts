/**
 * The task record (Miou's promise) and the task tree's links.
 *
 * Invariants:
 * - A parent's child list holds every child that is alive, or ended but not
 *   yet consumed (awaited or cancelled) by the parent. A consumed child leaves
 *   the list when it ends; a task that returns normally needs an empty list.
 * - `waiter` is non-null exactly while the task is parked on something; a
 *   cancellation detaches it before the task is woken with `Cancelled`.
 * - A spawned task's generator is made at its first step, so that thousands
 *   of queued children cost one small record each: until then (`gen` null,
 *   `F.STARTED` clear) `resume` holds the body and `outcome` its arguments
 *   (see `F.ONE_ARG`, `F.ARGS`).
 */

import type { Instruction } from "./operation.js";
import type { Orphans } from "./orphans.js";
import type { Scheduler } from "./scheduler.js";

/**
 * @internal How a task stands (a `const enum`: inlined as numbers in the
 * build, so the hot paths compare literals).
 */
export const enum State {
  Pending = 0,
  Resolved = 1,
  Failed = 2,
  Cancelled = 3,
}

/**
 * @internal Bits of `Task.flags` above the two that hold the task's `State`
 * (inlined as numbers in the build). Keeping the state in the same word
 * keeps the task record one field smaller.
 */
export const enum F {
  /** The two low bits: the task's `State`. */
  STATE = 3,
  /** In a run queue. */
  QUEUED = 4,
  /** Resume with `throw` rather than `next`. */
  THROW = 8,
  /** Its parent (or a failure above it) asked it to stop. */
  CANCEL_REQUESTED = 16,
  /** `Cancelled` was thrown into its fiber. */
  CANCEL_DELIVERED = 32,
  /** The parent awaited or cancelled it: it leaves the child list when it ends. */
  CONSUMED = 64,
  /** The parent is parked until this child ends. */
  JOINED = 128,
  /** Its body failed or was cancelled; it waits for its children to end. */
  ENDING = 256,
  /** Its fiber has run at least once. */
  STARTED = 512,
  /** Queued by `yield`: nothing is lost if a cancellation replaces the resumption. */
  YIELDED = 1024,
  /** Not started: `outcome` holds the body's single argument. */
  ONE_ARG = 2048,
  /** Not started: `outcome` holds the body's arguments as an array. */
  ARGS = 4096,
  /**
   * Runs to its first suspension even when cancelled before its first
   * step: a parallel task's proxy, which must tell the other domain.
   */
  NO_EARLY_CANCEL = 8192,
}

/** How a task stands: running or suspended, or how it ended. */
export type TaskStatus = "pending" | "resolved" | "failed" | "cancelled";
const STATUS: readonly TaskStatus[] = ["pending", "resolved", "failed", "cancelled"];

/** @internal What a parked task waits on. */
export interface Waiter {
  /** The parked task is being cancelled: forget it (it is woken with `Cancelled`). */
  detach(task: Task): void;
  /** A child this task joined has ended. */
  childEnded?(parent: Task, child: Task): void;
}

/** @internal Cold per-task state, allocated on first use to keep suspended fibers small. */
export interface TaskExtra {
  locals: unknown[] | null;
  protection: ProtectFrame | null;
  orphans: Orphans<unknown> | null;
  abort: AbortController | null;
  cancelledAt: number;
  warned: boolean;
}

/** @internal */
export interface ProtectFrame {
  readonly onCancellation: (() => void) | undefined;
  readonly outer: ProtectFrame | null;
}

let nextUid = 1;

/**
 * A task: Miou's promise. It has a `uid`, a parent and a status; it is *not* a
 * JavaScript Promise — get its outcome with `yield* B.awaitTask(task)`.
 *
 * @example
 * ```ts
 * const t: B.Task<number> = B.spawn(function* () { return 1; });
 * console.log(t.uid, t.status);            // 2 "pending"
 * const n = yield* B.awaitExn(t);          // 1
 * ```
 */
export class Task<T = unknown> {
  declare readonly __result?: T;
  /** A number unique within this thread. */
  readonly uid: number = nextUid++;
  /** @internal */ gen: Generator<Instruction, unknown, unknown> | null;
  /** @internal */ flags = 0;
  /** @internal The value or error it ended with; while `F.ENDING`, the error it will end with. */
  outcome: unknown = undefined;
  /** @internal What `next`/`throw` passes at the next step; while `F.ENDING`, the state it will end in. */
  resume: unknown = undefined;
  /** @internal */ waiter: Waiter | null = null;
  /** @internal */ firstChild: Task | null = null;
  /** @internal */ prevSibling: Task | null = null;
  /** @internal */ nextSibling: Task | null = null;
  /** @internal */ extra: TaskExtra | null = null;

  /** @internal */
  constructor(
    /** @internal */ readonly sched: Scheduler,
    /** The task that spawned this one; `null` for the root task of a `run`. */
    readonly parent: Task | null,
    gen: Generator<Instruction, unknown, unknown> | null,
  ) {
    this.gen = gen;
  }

  /** @internal How the task stands: the two low bits of `flags`. */
  get state(): State {
    return this.flags & F.STATE;
  }

  /** @internal */
  setState(state: State): void {
    this.flags = (this.flags & ~F.STATE) | state;
  }

  /** `"pending"` until the task (and its whole subtree) has ended. */
  get status(): TaskStatus {
    return STATUS[this.state]!;
  }

  /** @internal */
  get ended(): boolean {
    return this.state !== State.Pending;
  }

  /** @internal */
  getExtra(): TaskExtra {
    return (this.extra ??= { locals: null, protection: null, orphans: null, abort: null, cancelledAt: 0, warned: false });
  }

  toString(): string {
    return `Task(${this.uid}, ${this.status})`;
  }
}

/** @internal */
export function linkChild(parent: Task, child: Task): void {
  const first = parent.firstChild;
  child.nextSibling = first;
  if (first !== null) first.prevSibling = child;
  parent.firstChild = child;
}

/** @internal */
export function unlinkChild(parent: Task, child: Task): void {
  const prev = child.prevSibling;
  const next = child.nextSibling;
  if (prev !== null) prev.nextSibling = next;
  else if (parent.firstChild === child) parent.firstChild = next;
  else return; // already unlinked
  if (next !== null) next.prevSibling = prev;
  child.prevSibling = child.nextSibling = null;
}

/** @internal The uids of a task's children, for error messages. */
export function childUids(parent: Task): number[] {
  const uids: number[] = [];
  for (let c = parent.firstChild; c !== null; c = c.nextSibling) uids.push(c.uid);
  return uids.reverse();
}
