/**
 * `cancel`: end a child and its whole subtree, waiting for their cleanup.
 */
import { checkChild } from "./await.js";
import { currentTask } from "./kernel/current.js";
import { type Kernel, runningKernel } from "./kernel/kernel.js";
import { keepShapes } from "./kernel/shapes.js";
import { hasFailed, outcomeOf } from "./kernel/state.js";
import type { Task, Waiter } from "./kernel/task.js";
import { DONE_VOID, type Instruction, type Operation, RESUMED, SingleShot, SUSPENDED } from "./operation.js";

class CancelOp extends SingleShot<void> implements Waiter {
  /** The kernel its task parked in. */
  private kernel: Kernel | null = null;

  constructor(private readonly target: Task) {
    super();
  }

  next(resumed?: unknown): IteratorResult<Instruction, void> {
    if (resumed !== undefined) {
      // Its cleanup failed: the error is its outcome, and this task consumes it.
      if (hasFailed(this.target)) throw outcomeOf(this.target);
      return DONE_VOID;
    }
    const parent = currentTask("cancel()");
    const target = checkChild(parent, this.target, "cancel");
    const k = runningKernel()!;
    if (k.cancelChild(parent, target)) return DONE_VOID;
    this.kernel = k;
    k.join(target);
    k.park(parent, this);
    return SUSPENDED;
  }

  childEnded(parent: Task): void {
    this.kernel!.wake(parent, RESUMED);
  }

  detach(): void {
    this.kernel!.unjoin(this.target);
  }

  describe(): string {
    return `cancel ${this.target}`;
  }

  waitsFor(): Task {
    return this.target;
  }
}

/**
 * Cancels a child: `Cancelled` is thrown into it (its `finally` blocks run and
 * may still suspend), its children are cancelled in turn, and `cancel`
 * returns once the whole subtree has ended. Other tasks keep running
 * meanwhile. Cancelling a child that already ended makes its result
 * `Cancelled`. Cancelling consumes the child: no `await` is needed after it.
 *
 * An error is never lost to a cancellation: if the child fails before it
 * ends — its cleanup throws, or a task of its subtree does while cancelled —
 * that error is its outcome, and `cancel` throws it, as it was thrown (a
 * `Failures` of them all, the first first, when there are several).
 *
 * @example
 * ```ts
 * const t = B.spawn(function* () { for (;;) yield* B.yieldNow(); });
 * yield* B.cancel(t);
 * (yield* B.awaitTask(t)).ok;   // false: Cancelled
 *
 * const w = B.spawn(function* () { try { yield* pump(); } finally { yield* flush(); } });
 * try { yield* B.cancel(w); } catch (e) { console.error("flush failed", e); }   // what flush threw
 * ```
 * @throws NotAChild when the current task is not the task's parent.
 * @throws TypeError when `task` is not a task.
 * @throws the error the child failed with while it was cancelled (its cleanup's), or a
 * `Failures` of several.
 */
export function cancel(task: Task<unknown>): Operation<void> {
  return new CancelOp(task);
}

// A cancel whose map outlives the cancels programs make (see kernel/shapes.ts).
keepShapes(new CancelOp(null as unknown as Task));
