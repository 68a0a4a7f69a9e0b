/**
 * A bell: a wait one task makes again and again (a `toStream` pump's wait
 * for its consumer, or for its producer's next write), rung from Node's
 * callbacks. Unlike a `Trigger` it is not spent by a ring, so one serves
 * every wait of its task: nothing is allocated per wait.
 */
import type * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";

const DONE: IteratorReturnResult<void> = { done: true, value: undefined };

/**
 * @internal The waiter checks what it waits for before each wait and after
 * each ring (`while (!ready()) yield* bell;`): a ring while nobody waits is
 * not kept, as the waiter will see its cause when it checks.
 */
export class Bell extends L.Suspender<void> {
  /** Wakes the task waiting here, if one is. */
  ring(): void {
    this.wake();
  }

  protected start(): IteratorResult<B.Instruction, void> {
    return this.suspend();
  }

  protected resume(): IteratorResult<B.Instruction, void> {
    return DONE;
  }

  protected leave(): void {}

  override describe(): string {
    return "a toStream stream's next read or write";
  }
}
