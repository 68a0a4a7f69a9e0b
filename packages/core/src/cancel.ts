/**
 * `cancel`: end a child and its whole subtree, waiting for their cleanup.
 */
import { checkChild } from "./await.js";
import { DONE_VOID, type Instruction, type Operation, RESUMED, SingleShot, SUSPENDED } from "./operation.js";
import { cancelChild, currentTask } from "./scheduler.js";
import { F, type Task, type Waiter } from "./task.js";

class CancelOp extends SingleShot<void> implements Waiter {
  constructor(private readonly target: Task) {
    super();
  }

  next(resumed?: unknown): IteratorResult<Instruction, void> {
    if (resumed !== undefined) return DONE_VOID;
    const parent = currentTask("cancel()");
    const target = checkChild(parent, this.target, "cancel");
    if (cancelChild(parent, target)) return DONE_VOID;
    target.flags |= F.JOINED;
    parent.waiter = this;
    return SUSPENDED;
  }

  childEnded(parent: Task): void {
    parent.sched.resume(parent, RESUMED);
  }

  detach(): void {
    this.target.flags &= ~F.JOINED;
  }
}

/**
 * Cancels a child: `Cancelled` is thrown into it (its `finally` blocks run and
 * may still suspend), its children are cancelled in turn, and `cancel`
 * returns once the whole subtree has ended. Other tasks keep running
 * meanwhile. Cancelling a child that already ended makes its result
 * `Cancelled`. Cancelling consumes the child: no `await` is needed after it.
 *
 * @example
 * ```ts
 * const t = B.spawn(function* () { for (;;) yield* B.yieldNow(); });
 * yield* B.cancel(t);
 * (yield* B.awaitTask(t)).ok;   // false: Cancelled
 * ```
 * @throws NotAChild when the current task is not the task's parent.
 */
export function cancel(task: Task<unknown>): Operation<void> {
  return new CancelOp(task);
}
