/**
 * Objects kept for the life of the program, so that the hidden classes
 * ("maps") of records that programs make and drop outlive the records. V8
 * reaches the map that a constructor's field assignments give an object only
 * through weak transitions: once every object of a class has died — every
 * task and every part of a kernel after a run settles, every channel and
 * waiter between two bursts — a full collection frees the map and throws away
 * each optimised function compiled against it, and the next objects run
 * unoptimised until V8 compiles them again. One live object of each class
 * keeps its map: here, one task record and the last kernel to finish (its
 * loop, its queues, its life), which lets go of its root task and so of what
 * its run returned; a family (task.ts); and whatever other parts of Bobbin
 * hand to `keepShapes`.
 */
import { RunQueue } from "./run-queue.js";
import { Family, State, Task } from "./task.js";

// A family as a parent of several children and a cancelled task have it: a list of
// children, and the times of a cancellation and of a wait for its children after it (doubles: a field first given a small
// integer changes map when it gets one).
const family = new Family();
family.kids = new RunQueue<Task>(16);
family.cancelledAt = 0.5;
family.joinedAt = 0.5;
family.name = "";

// The first slot holds the last kernel to finish (`keepKernel`; null before the first), not a
// variable of its own: the build drops a module variable that nothing in it reads (only the tests
// read what is kept), and the kernel's maps went with it.
const KERNEL = 0;
const kept: (object | null)[] = [null, new Task(0, null, null as unknown as Task["gen"], State.Resolved, undefined), family];

/**
 * Keeps `objects` alive for the life of the program, so that the hidden
 * classes of the records they stand for survive full collections (see the
 * file comment). Give it one object of each class a hot path makes, built
 * with the kinds of values programs put in its fields; call it once, at a
 * module's top level.
 *
 * @example
 * ```ts
 * const sample = new Waiter(null, 0);
 * sample.value = 0;                  // the kind of value programs store there
 * L.keepShapes(sample);
 * ```
 * @throws never
 */
export function keepShapes(...objects: object[]): void {
  kept.push(...objects);
}

/** @internal `finished` is the kernel whose run has just settled: it keeps the maps of a kernel's parts until the next. */
export function keepKernel(finished: object): void {
  kept[KERNEL] = finished;
}

/** @internal The objects kept (for the test that the records a run makes share their maps). */
export function keptShapes(): readonly object[] {
  return kept.filter((k) => k !== null);
}

/** @internal The kernel kept (for the test that nothing of its run is). */
export function keptKernel(): object | null {
  return kept[KERNEL] ?? null;
}
