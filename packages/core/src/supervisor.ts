/**
 * Supervising a set of children while their parent waits: the machinery under
 * the combinators (`all`, `any`, `race`) and task groups.
 *
 * The parent (the owner) parks on the supervisor, which joins every child it
 * watches, so the kernel tells it of each end. A subclass says what an end
 * means (`ended`): keep a value, start a queued task, stop the others. The
 * owner resumes once every child has ended. When its wait is interrupted —
 * the owner is cancelled, or `L.interrupt` throws into it — the children are
 * stopped and awaited all the same, and only then is the error thrown: a
 * supervisor never lets its owner go on while one of its children runs.
 *
 * Children are consumed as they are added (their outcome belongs to the
 * supervisor), so each leaves the tree as soon as it ends and a long-lived
 * group does not accumulate ended tasks.
 *
 * No failure is lost: the one that stops a supervision early (a subclass
 * records it) and every child that fails while the others are being stopped
 * (its cleanup threw, most often) are kept in `failed`, first failure first,
 * and reported together (see `failureOf`).
 */
import { Cancelled, failureOf } from "./errors.js";
import type { Kernel } from "./kernel/kernel.js";
import { hasFailed, isPending, outcomeOf } from "./kernel/state.js";
import type { Task } from "./kernel/task.js";
import { DONE_VOID, type Instruction, RESUMED, SingleShot, SUSPENDED } from "./operation.js";

const NOT_INTERRUPTED = Symbol("not interrupted");

/** @internal See the file comment. */
export abstract class Supervisor extends SingleShot<void> {
  /** Children that have not ended, or whose end has not been handled yet. */
  protected readonly live = new Set<Task>();
  /** Whether every child has ended and the owner was told: no child can be added any more. */
  protected over = false;
  /** Whether `stop` was called: the supervision is ending early. */
  protected stopping = false;
  /** Whether the owner is parked here (the live children are then joined). */
  private parked = false;
  /** The failures to report, first failure first (see the file comment). */
  readonly failed: unknown[] = [];

  constructor(
    readonly k: Kernel,
    readonly owner: Task,
  ) {
    super();
  }

  /**
   * What the end of `child` means; it has left `live` already, and if it
   * failed while stopping, its error is in `failed` already.
   */
  protected abstract ended(child: Task): void;

  /** Says what the owner waits on, in words (for diagnostics). */
  abstract describe(): string;

  /** The owner waits for its live children (deadlock detection). */
  waitsFor(): Task[] {
    return [...this.live];
  }

  /**
   * Stops the supervision early: every live child is cancelled. Subclasses
   * that keep children outside `live` stop those too.
   */
  stop(): void {
    this.stopping = true;
    this.cancelLive(null);
  }

  /** Cancels every live child but `spare` (which may be null). */
  protected cancelLive(spare: Task | null): void {
    for (const child of this.live) {
      if (child !== spare && isPending(child)) this.k.cancelChild(this.owner, child);
    }
  }

  /** Puts a child made by `makeChild` into the tree, under watch. */
  protected add(child: Task): void {
    const k = this.k;
    k.adopt(this.owner, child);
    k.consume(this.owner, child);
    this.live.add(child);
    if (this.parked) k.join(child);
  }

  /**
   * Waits, as the owner, until every child has ended. An error thrown into
   * the wait stops the children; it is rethrown once they have all ended,
   * with their failures after it (a `Cancelled` gives way to them, as a
   * cancelled task's does to what its cleanup throws).
   */
  *supervise(): Generator<Instruction, void, unknown> {
    let interruption: unknown = NOT_INTERRUPTED;
    for (;;) {
      try {
        yield* this;
        break;
      } catch (error) {
        if (interruption === NOT_INTERRUPTED) interruption = error;
        this.stop();
      }
    }
    if (interruption === NOT_INTERRUPTED) return;
    if (this.failed.length === 0) throw interruption;
    throw failureOf(interruption instanceof Cancelled ? this.failed : [interruption, ...this.failed]);
  }

  /** A child's end is handled: it leaves `live`; failing while stopping, it is recorded. */
  private handleEnd(child: Task): void {
    this.live.delete(child);
    if (hasFailed(child)) this.k.failureTaken(this.owner, child);
    if (this.stopping && hasFailed(child)) this.failed.push(outcomeOf(child));
    this.ended(child);
  }

  /** @internal One wait of the owner: parks it until the last live child ends. */
  next(resumed?: unknown): IteratorResult<Instruction, void> {
    if (resumed !== undefined) return DONE_VOID;
    // Children that ended while the owner was not parked here (after an
    // interruption) were not joined: their ends are handled now.
    for (const child of this.live) {
      if (!isPending(child)) this.handleEnd(child);
    }
    if (this.live.size === 0) {
      this.over = true;
      return DONE_VOID;
    }
    const k = this.k;
    for (const child of this.live) k.join(child);
    this.parked = true;
    k.park(this.owner, this);
    return SUSPENDED;
  }

  /** @internal The kernel: a joined child has ended. */
  childEnded(_owner: Task, child: Task): void {
    this.handleEnd(child);
    if (this.live.size !== 0) return;
    this.parked = false;
    this.over = true;
    this.k.wake(this.owner, RESUMED);
  }

  /** @internal The kernel: the owner is woken to leave (cancelled or interrupted). */
  detach(): void {
    this.parked = false;
    for (const child of this.live) this.k.unjoin(child);
  }
}
