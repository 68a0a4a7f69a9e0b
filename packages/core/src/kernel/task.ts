/**
 * The task record (Miou's promise) and the cold state some tasks carry.
 *
 * A task is six fields, because a pending child's record is what a program
 * with many children keeps alive and what the garbage collector copies
 * (the target is ≤ 72 B a record). Each field serves several phases of the task's life:
 *
 * | phase          | `gen`                 | `value`                          |
 * |----------------|-----------------------|----------------------------------|
 * | queued, unborn | the body (a function) | its argument(s)                 |
 * | parked         | the generator         | the waiter                       |
 * | queued         | the generator         | the resumption (or an error to throw) |
 * | ending         | the generator's prototype (it names the task) | the outcome it will end with |
 * | ended          | the generator's prototype | the outcome                  |
 *
 * `family` is null, the task's only child (the common case of a task that
 * awaits one child at a time allocates nothing more), or a {@link Family}
 * holding several children and the task's cold state.
 *
 * Only the kernel (this folder) writes these fields, `flags` and `value`
 * through the transitions of state.ts; the rest of core goes through
 * {@link Kernel}'s methods and reads a task through state.ts's queries.
 */

import type { AsyncResource } from "node:async_hooks";
import type { Instruction } from "../operation.js";
import { bodyName } from "./names.js";
import type { RunQueue } from "./run-queue.js";

/** @internal How a task stands: the two low bits of `flags`. */
export const enum State {
  Pending = 0,
  Resolved = 1,
  Failed = 2,
  Cancelled = 3,
}

/** @internal Bits of `Task.flags` (a `const enum`: inlined as numbers in the build). */
export const enum F {
  /** The two low bits: the task's `State`. */
  STATE = 3,
  /** In a ready queue. */
  QUEUED = 1 << 2,
  /** Resume with `throw` (the resumption is an error) rather than `next`. */
  THROW = 1 << 3,
  /** Its parent (or a failure above it) asked it to stop. */
  CANCEL_REQUESTED = 1 << 4,
  /** `Cancelled` was thrown into its fiber. */
  CANCEL_DELIVERED = 1 << 5,
  /** The parent awaited or cancelled it: it leaves the child set when it ends. */
  CONSUMED = 1 << 6,
  /** The parent is parked until this child ends. */
  JOINED = 1 << 7,
  /** Its body failed or was cancelled; it waits for its children to end (see `ENDING_STATE`). */
  ENDING = 1 << 8,
  /** Its fiber has run at least once. */
  STARTED = 1 << 9,
  /** Queued by `yield`: nothing is lost if a cancellation replaces the resumption. */
  YIELDED = 1 << 10,
  /** Unborn: `value` holds the body's single argument. */
  ONE_ARG = 1 << 11,
  /** Unborn: `value` holds the body's arguments as an array. */
  ARGS = 1 << 12,
  /**
   * Runs to its first suspension even when cancelled before its first step:
   * a parallel task's proxy, which must tell the other domain.
   */
  NO_EARLY_CANCEL = 1 << 13,
  /** Parked: `value` holds what it waits on. */
  PARKED = 1 << 14,
  /** While `ENDING`: the state it will end in (two bits). */
  ENDING_SHIFT = 15,
  ENDING_STATE = 3 << 15,
  /** Its cancellation was watched for a swallowed `Cancelled` (see cancellation.ts). */
  WARNED = 1 << 17,
  /** `L.unpark` came while it was not parked by `L.park`: its next `L.park` returns at once (see park.ts). */
  PERMIT = 1 << 18,
}

/**
 * How a task stands: running or suspended, or how it ended.
 *
 * @example
 * ```ts
 * if (task.status === "failed") console.error(`${task} failed`);
 * ```
 */
export type TaskStatus = "pending" | "resolved" | "failed" | "cancelled";
/** @internal A task's status, by its `State`. */
export const STATUS: readonly TaskStatus[] = ["pending", "resolved", "failed", "cancelled"];

/**
 * @internal What a parked task waits on. A waiter that acts on its kernel
 * when it hears of something (wakes its task, say) keeps the kernel it
 * parked in.
 */
export interface Waiter {
  /** The parked task is woken by a cancellation or an interruption: forget it. */
  detach(task: Task): void;
  /** A child this task joined has ended. */
  childEnded?(parent: Task, child: Task): void;
  /** Says what the task waits on, in words (for diagnostics). */
  describe?(): string;
  /**
   * The tasks one of which must act for the wait to end (an awaited child,
   * a lock's holder); absent or null when anyone may end it. Deadlock
   * detection follows these (see deadlock/cycles.ts).
   */
  waitsFor?(): Task | readonly Task[] | null;
}

/** @internal */
export interface ProtectFrame {
  readonly onCancellation: (() => void) | undefined;
  readonly outer: ProtectFrame | null;
}

/** @internal One value given to a context (context.ts); `outer` is the value list it was given in front of. */
export interface ContextFrame {
  /** The context's name: what identifies it in every domain. */
  readonly name: string;
  readonly value: unknown;
  /** Whether the value goes along with a `call` to another domain. */
  readonly crosses: boolean;
  readonly outer: ContextFrame | null;
}

/** @internal A captured stack, formatted only when read (traces.ts). */
export interface Place {
  stack?: string;
}

/**
 * @internal Where a task's children are held until someone takes them (an
 * orphans collector), kept by the task that owns it while it holds any: told
 * when a child of that task ends, it notes the child if it holds it, and
 * says whether it did.
 */
export interface Collector {
  ended(child: Task): boolean;
}

/**
 * @internal A task's children, when it has more than one at a time, and its
 * cold state, allocated on first use.
 *
 * The children are kept in `kids` in spawn order; one that has ended and was
 * consumed stays there (a tombstone) until the list is compacted, so leaving
 * is O(1) and no child needs a link to its siblings. `live` counts those that
 * have not (ended and been consumed).
 */
export class Family {
  kids: RunQueue<Task> | null = null;
  live = 0;
  locals: unknown[] | null = null;
  protection: ProtectFrame | null = null;
  /**
   * The orphans collectors it owns that hold a task, told when a child of it
   * ends. Kept here, on the owner, rather than on each child they hold: a
   * held child would otherwise need cold state of its own only to say where
   * it is held.
   */
  collectors: Collector[] | null = null;
  abort: AbortController | null = null;
  /** An explicit name (`spawn({ name })`). */
  name: string | null = null;
  /** When the cancellation was requested (real time, see cancellation.ts), for the swallowed-cancel warning; +∞: not watched. */
  cancelledAt = 0;
  /** When, cancelled and watched, it parked until children of its own end (0: it did not): see cancellation.ts. */
  joinedAt = 0;
  /** While it ends (`ENDING`): its children that failed meanwhile, whose errors join its outcome (see ending.ts). */
  failedChildren: Task[] | null = null;
  /** The context values it sees, the nearest first (see context.ts). */
  context: ContextFrame | null = null;
  /** The async context its steps run in, when not the run's (see async-context.ts). */
  asyncContext: AsyncResource | null = null;
  /** Where it was spawned, and where it last parked, when the run keeps traces (see traces.ts). */
  spawnedAt: Place | null = null;
  suspendedAt: Place | null = null;
}

/** The type a task's body returns, carried by the type alone (a key nobody can name, so not offered as a property). */
declare const resultType: unique symbol;

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
  declare readonly [resultType]?: T;
  /** A number unique within its domain of the run, increasing in spawn order (the root is 1). */
  readonly uid: number;
  /** @internal */ flags: number;
  /** The task that spawned this one; `null` for the root task of a `run` (and for a system task, see `spawnSystem`). */
  readonly parent: Task | null;
  /** @internal See the table above. */ gen: Generator<Instruction, unknown, unknown> | ((...args: never[]) => unknown) | object | null;
  /** @internal See the table above. */ value: unknown;
  /** @internal */ family: Task | Family | null;

  /** @internal */
  constructor(uid: number, parent: Task | null, gen: Task["gen"], flags: number, value: unknown) {
    this.uid = uid;
    this.flags = flags;
    this.parent = parent;
    this.gen = gen;
    this.value = value;
    this.family = null;
  }

  /** @internal How the task stands: the two low bits of `flags`. */
  get state(): State {
    return this.flags & F.STATE;
  }

  /** `"pending"` until the task (and its whole subtree) has ended. */
  get status(): TaskStatus {
    return STATUS[this.flags & F.STATE]!;
  }

  /**
   * The task's name: the one given to `spawn({ name })`, otherwise its body's
   * function name (`"anonymous"` for an anonymous function).
   */
  get name(): string {
    return nameFrom(nameSource(this));
  }

  /** `name#uid`, as every error and diagnostic names a task. */
  toString(): string {
    return `${this.name}#${this.uid}`;
  }
}

/**
 * @internal What names `task` (see `Task.name`): the name given to
 * `spawn({ name })`, or else its `gen` field, whose body `bodyName` knows.
 * The flight recorder keeps this rather than an ended task, which it must
 * not keep alive (nor store, young, into its ring: see recorder.ts).
 */
export function nameSource(task: Task): string | Task["gen"] {
  const family = task.family;
  return family instanceof Family && family.name !== null ? family.name : task.gen;
}

/** @internal The name of a task from what `nameSource` returned. */
export function nameFrom(source: string | Task["gen"]): string {
  return typeof source === "string" ? source : bodyName(source);
}
