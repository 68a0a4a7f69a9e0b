/**
 * Cycles of waits. Some waits name the tasks one of which must act for them
 * to end (`Waiter.waitsFor`): an awaited or cancelled child, the children of
 * `awaitAll` or of a group, a lock's holder. A set of parked tasks each of
 * which waits only for tasks of the set can never go on by itself: the
 * largest such set is found by starting from every parked task with such a
 * wait and dropping, until nothing changes, any task that waits for one
 * outside the set. A wait that names nobody (a trigger, a condition, a
 * channel, I/O, a timer) is never part of one, nor is a task something
 * outside the tree will interrupt (`registerInterrupter`: a deadline).
 */
import { describe } from "../describe.js";
import type { Kernel } from "../kernel/kernel.js";
import { isEnding, isPending, waiterOf } from "../kernel/state.js";
import type { Task } from "../kernel/task.js";
import { childrenOf } from "../kernel/tree.js";

const interrupters: ((task: Task<unknown>) => boolean)[] = [];

/**
 * Tells deadlock detection how to know that something outside the task tree
 * will interrupt a task (`L.interrupt`) if its wait lasts — a deadline, as
 * `@bobbin/unix`'s `withTimeout` arms: a cycle of waits through such a task
 * is no deadlock. `armed(task)` says whether one is armed for `task`; it is
 * asked only when a cycle may have formed, so it costs nothing meanwhile.
 * Register it once, when the module that arms deadlines loads.
 *
 * @example
 * ```ts
 * const deadlines = new Map<B.Task<unknown>, NodeJS.Timeout>();   // armed with setTimeout(() => L.interrupt(task, e), ms)
 * L.registerInterrupter((task) => deadlines.has(task));
 * ```
 * @throws TypeError when `armed` is not a function.
 */
export function registerInterrupter(armed: (task: Task<unknown>) => boolean): void {
  if (typeof armed !== "function") {
    throw new TypeError(`registerInterrupter(armed) expects a function (task) => boolean, got ${describe(armed)}`);
  }
  interrupters.push(armed);
}

function interruptible(task: Task): boolean {
  for (const armed of interrupters) if (armed(task)) return true;
  return false;
}

/** The tasks `task` waits for: its live children once its body ended, or those its wait names. */
function waitsFor(task: Task): readonly Task[] | null {
  if (isEnding(task)) return childrenOf(task).filter(isPending);
  const waiter = waiterOf(task);
  const named = waiter?.waitsFor?.();
  if (named === undefined || named === null) return null;
  return Array.isArray(named) ? named : [named as Task];
}

/**
 * @internal The tasks of `kernel` that wait for each other for good (`stuck`,
 * empty when none do), and whether any task waits on a task other than its
 * children (`held`: a lock's holder) — without such a wait no cycle can form.
 */
export function deadlockedTasks(kernel: Kernel): { stuck: Map<Task, readonly Task[]>; held: boolean } {
  const stuck = new Map<Task, readonly Task[]>();
  let held = false;
  const stack = kernel.life.topTasks();
  while (stack.length !== 0) {
    const task = stack.pop()!;
    const named = waitsFor(task);
    if (named !== null && named.length !== 0 && !interruptible(task)) {
      stuck.set(task, named);
      if (!held) held = named.some((t) => t.parent !== task);
    }
    for (const child of childrenOf(task)) stack.push(child); // no spread: a task may have more children than a call takes arguments
  }
  for (let changed = true; changed; ) {
    changed = false;
    for (const [task, named] of stuck) {
      if (named.every((t) => stuck.has(t))) continue;
      stuck.delete(task);
      changed = true;
    }
  }
  return { stuck, held };
}

/** @internal A cycle among deadlocked tasks: each waits for the next, and the last for the first. */
export function cycleAmong(stuck: Map<Task, readonly Task[]>): Task[] {
  const seen = new Map<Task, number>();
  const path: Task[] = [];
  let task = stuck.keys().next().value as Task;
  while (!seen.has(task)) {
    seen.set(task, path.length);
    path.push(task);
    task = stuck.get(task)![0]!;
  }
  return path.slice(seen.get(task));
}

/**
 * @internal Whether no task of the run can break the deadlock: every
 * ancestor of the deadlocked tasks is deadlocked too, so none is left that
 * could cancel one of them. Otherwise a task above them may still (after a
 * timeout, say), and the deadlock is only reported.
 */
export function nobodyCanBreak(stuck: Map<Task, readonly Task[]>): boolean {
  for (const task of stuck.keys()) {
    for (let up = task.parent; up !== null; up = up.parent) if (!stuck.has(up)) return false;
  }
  return true;
}

/** @internal Each task of a cycle with what it waits on: "a#2 (lock Mutex#1 held by b#3) → b#3 (…) → a#2". */
export function describeCycle(cycle: readonly Task[]): string {
  const steps = cycle.map((t) => {
    const waiter = waiterOf(t);
    let what = "";
    try {
      what = waiter?.describe?.() ?? "";
    } catch {
      // a describe that throws: the task is named without it
    }
    return what === "" ? String(t) : `${t} (${what})`;
  });
  return `${steps.join(" → ")} → ${cycle[0]}`;
}
