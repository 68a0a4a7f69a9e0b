/**
 * `park` and `unpark`: a task waits until another wakes it by its handle,
 * with no wake-up object of its own (the cheapest way to keep many tasks
 * waiting: see kernel/park.ts).
 */
import { describe } from "./describe.js";
import { kernelOf } from "./kernel/kernel.js";
import { Parking } from "./kernel/park.js";
import { Task } from "./kernel/task.js";
import { DONE_VOID, type Instruction, type Operation, SingleShot, SUSPENDED } from "./operation.js";

class ParkOp extends SingleShot<void> {
  next(resumed?: unknown): IteratorResult<Instruction, void> {
    if (resumed !== undefined) return DONE_VOID;
    const k = kernelOf("park()");
    return k.parking.park(k.current!) ? SUSPENDED : DONE_VOID;
  }
}

const PARK_OP = new ParkOp();

/**
 * Suspends the current task until `unpark(task)` wakes it. If `unpark` came
 * first (since the task's last `park`), it returns at once, taking that
 * wake-up; wake-ups do not add up: several let one `park` through. Unlike a
 * `Trigger`, nothing is allocated: the task is its own handle, so a parked
 * fiber costs its task and its generator alone.
 *
 * @example
 * ```ts
 * const waiter = B.spawn(function* () { yield* L.park(); return "woken"; });
 * yield* B.yieldNow();
 * L.unpark(waiter);                 // true: it was parked
 * yield* B.awaitExn(waiter);        // "woken"
 * ```
 * @throws Cancelled when the task is cancelled while parked.
 * @throws TypeError outside a task.
 */
export function park(): Operation<void> {
  return PARK_OP;
}

/**
 * Wakes `task` if it is suspended in `park()`, and returns true. Otherwise
 * (running, ready, waiting on something else) returns false and lets its
 * next `park()` return at once; on an ended task it does nothing. Call it
 * from any task of the same thread, or from a Node callback.
 *
 * @example
 * ```ts
 * const me = B.self();
 * setTimeout(() => L.unpark(me), 10);
 * yield* L.park();
 * ```
 * @throws TypeError when `task` is not a task.
 */
export function unpark(task: Task<unknown>): boolean {
  if (!(task instanceof Task)) throw new TypeError(`unpark(task) expects a task, got ${describe(task)}`);
  return Parking.unpark(task);
}
