/**
 * Objects kept for the life of the program, so that the hidden classes
 * ("maps") of the kernel's records outlive the records. V8 reaches the map
 * that a constructor's field assignments give an object only through weak
 * transitions: once every object of a class has died — every task and every
 * part of a kernel, after a run settles — a full collection frees the map and
 * throws away each optimised function compiled against it, and the next run
 * starts unoptimised (a batch of runs, or a server between bursts, paid that
 * after every full collection). One live object of each class keeps its map:
 * the last kernel to finish (its loop, its queues, its life), which lets go
 * of its root task and so of what its run returned, and one task record.
 */
import { State, Task } from "./task.js";

const task = new Task(0, null, null as unknown as Task["gen"], State.Resolved, undefined);
let kernel: object | null = null;

/** @internal `finished` is the kernel whose run has just settled: it keeps the maps (see the file comment) until the next. */
export function keepShapes(finished: object): void {
  kernel = finished;
}

/** @internal What is kept (for the test that nothing of a run is). */
export function keptShapes(): readonly object[] {
  return kernel === null ? [task] : [task, kernel];
}
