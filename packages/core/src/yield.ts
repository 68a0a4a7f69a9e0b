/**
 * `yieldNow` (Miou's `yield`): let every other ready task run first.
 */
import { DONE_VOID, type Instruction, type Operation, RESUMED, SingleShot, YIELDED } from "./operation.js";

class YieldOp extends SingleShot<void> {
  next(resumed?: unknown): IteratorResult<Instruction, void> {
    return resumed === RESUMED ? DONE_VOID : YIELDED;
  }
}

const YIELD_OP = new YieldOp();

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
