/**
 * Context values as the tree carries them: each task may hold a list of the
 * values given to contexts (`B.createContext`) in its cold state, the nearest
 * first. A child takes the list of the task that spawned it, as it stands at
 * the spawn, so a value given later (or taken back) is not seen by children
 * spawned before. The lists are immutable: a child shares its spawner's list
 * rather than copying it.
 */
import type { ContextFrame, Task } from "./task.js";
import { coldOf, familyOf } from "./tree.js";

export type { ContextFrame } from "./task.js";

/** Whether any task of this thread was ever given a context value: until then a spawn looks at nothing. */
let given = false;

/** @internal The context values `task` sees, the nearest first (null: none). */
export function contextOf(task: Task): ContextFrame | null {
  return coldOf(task)?.context ?? null;
}

/** @internal Gives `task` the value list `frame` (the caller restores the one it replaced, returned). */
export function setContext(task: Task, frame: ContextFrame | null): ContextFrame | null {
  const cold = frame === null ? coldOf(task) : familyOf(task);
  if (cold === null) return null;
  const outer = cold.context;
  cold.context = frame;
  if (frame !== null) given = true;
  return outer;
}

/** @internal A new task takes the context values of the task that spawned it. */
export function inheritContext(spawner: Task, child: Task): void {
  if (!given) return;
  const frame = contextOf(spawner);
  if (frame !== null) familyOf(child).context = frame;
}
