/**
 * `yieldNow` (Miou's `yield`): let every other ready task run first; and
 * `yieldIfDue`, the same only once the loop's slice is spent, for CPU loops.
 */
import { kernelOf } from "./kernel/kernel.js";
import { isCancelRequested } from "./kernel/state.js";
import { DONE_VOID, type Instruction, type Operation, RESUMED, SingleShot, YIELDED } from "./operation.js";

class YieldOp extends SingleShot<void> {
  next(resumed?: unknown): IteratorResult<Instruction, void> {
    return resumed === RESUMED ? DONE_VOID : YIELDED;
  }
}

class YieldIfDueOp extends SingleShot<void> {
  next(resumed?: unknown): IteratorResult<Instruction, void> {
    if (resumed === RESUMED) return DONE_VOID;
    const k = kernelOf("yieldIfDue()");
    return k.loop.isDue() || isCancelRequested(k.current!) ? YIELDED : DONE_VOID;
  }
}

const YIELD_OP = new YieldOp();
const YIELD_IF_DUE_OP = new YieldIfDueOp();

/**
 * Puts the current task at the back of the run queue, so the task that has
 * waited longest runs next. Also exported as `yield`.
 *
 * @example
 * ```ts
 * for (;;) { work(); yield* B.yieldNow(); }
 * ```
 * @throws Cancelled when the task is cancelled meanwhile.
 */
export function yieldNow(): Operation<void> {
  return YIELD_OP;
}

/**
 * Yields as `yieldNow` does only when the loop's current slice is spent
 * (`run`'s `sliceMs`, 10 ms by default), and otherwise returns at once: a
 * CPU loop that calls it every iteration keeps its domain's other tasks and
 * Node's event loop served at the cost of a fraction of a clock read per
 * call (it reads the clock every few calls, fewer as calls come faster),
 * not of a trip through the run queue. It also yields at once when the task's
 * cancellation was asked for, so that a loop over it stops promptly.
 *
 * @example
 * ```ts
 * for (const item of items) { digest(item); yield* B.yieldIfDue(); }
 * ```
 * @throws Cancelled when it yields and the task is cancelled meanwhile.
 * @throws TypeError outside a task.
 */
export function yieldIfDue(): Operation<void> {
  return YIELD_IF_DUE_OP;
}
