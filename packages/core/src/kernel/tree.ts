/**
 * The task tree: each task's children, kept in its `family` field.
 *
 * A task with no child has `family === null`; with one child and no cold
 * state, `family` is that child (no allocation: the common shape of a task
 * that awaits one child at a time); otherwise a {@link Family}. A child stays
 * in its parent's set until it has both ended and been consumed (awaited or
 * cancelled) by the parent: then it is *forgotten*. Forgetting is O(1): the
 * child stays in `kids` as a tombstone until the list is compacted, which
 * happens when tombstones outnumber the living.
 *
 * `kids` is a chunked FIFO (run-queue.ts), not an array: a parent that
 * spawns a hundred thousand children would grow an array by copying it into
 * ever larger, old, backing stores, each store of a young child into them a
 * remembered-set entry for the scavenger.
 */
import { broken } from "./assert.js";
import { RunQueue } from "./run-queue.js";
import { isPending, toConsumed } from "./state.js";
import { F, Family, State, type Task } from "./task.js";

/** Children in the first chunk of a parent's list: few, as most parents with a list have (later chunks grow). */
const KIDS_CHUNK = 16;

/** @internal Links a new child into its parent's set. */
export function addChild(parent: Task, child: Task): void {
  if (__BOBBIN_DEV__ && (child.parent !== parent || (child.flags & (F.QUEUED | F.STARTED | F.STATE)) !== 0)) {
    broken(child, `joins ${parent}'s children while not a new child of it`);
  }
  const family = parent.family;
  if (family === null) {
    parent.family = child;
    return;
  }
  const f = family instanceof Family ? family : upgrade(parent, family);
  const kids = f.kids ?? (f.kids = new RunQueue<Task>(KIDS_CHUNK));
  if (kids.size >= 2 * f.live + 16) compact(kids);
  kids.push(child);
  f.live++;
}

/** @internal The child has ended and was consumed: it leaves its parent's set. */
export function forgetChild(parent: Task, child: Task): void {
  if (__BOBBIN_DEV__ && (isInSet(child) || liveChildren(parent) === 0))
    broken(child, `leaves ${parent}'s children while still in the set, or not in it`);
  const family = parent.family;
  if (family === child) parent.family = null;
  else if (family instanceof Family && --family.live === 0) family.kids = null;
}

/** @internal The parent took `child`'s outcome (or gave it up): the child leaves the set once ended. */
export function consumeChild(parent: Task, child: Task): void {
  if (toConsumed(parent, child) && !isPending(child)) forgetChild(parent, child);
}

/** @internal How many children are alive or not yet consumed. */
export function liveChildren(task: Task): number {
  const family = task.family;
  if (family === null) return 0;
  return family instanceof Family ? family.live : 1;
}

/** @internal The children alive or not yet consumed, oldest first. */
export function childrenOf(task: Task): Task[] {
  const family = task.family;
  if (family === null) return [];
  if (!(family instanceof Family)) return [family];
  return family.kids === null ? [] : family.kids.items().filter(isInSet);
}

/** @internal The task's cold state, made (or upgraded from a single child) on first use. */
export function familyOf(task: Task): Family {
  const family = task.family;
  if (family instanceof Family) return family;
  return family === null ? (task.family = new Family()) : upgrade(task, family);
}

/** @internal The task's cold state if it has any, without making it. */
export function coldOf(task: Task): Family | null {
  const family = task.family;
  return family instanceof Family ? family : null;
}

function upgrade(parent: Task, only: Task): Family {
  const f = new Family();
  f.kids = new RunQueue<Task>(KIDS_CHUNK);
  f.kids.push(only);
  f.live = 1;
  parent.family = f;
  return f;
}

/** A child still in its parent's set: not both ended and consumed. */
function isInSet(child: Task): boolean {
  return (child.flags & F.CONSUMED) === 0 || (child.flags & F.STATE) === State.Pending;
}

/** Drops the tombstones, keeping the order of the rest. */
function compact(kids: RunQueue<Task>): void {
  for (let n = kids.size; n > 0; n--) {
    const child = kids.shift()!;
    if (isInSet(child)) kids.push(child);
  }
}
