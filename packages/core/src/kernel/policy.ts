/**
 * Which ready task runs next. By default a FIFO (the task that has waited
 * longest), with cancellation and cleanup work ahead of ordinary steps; a
 * {@link SchedulingPolicy} may choose instead (seeded random orders, PCT,
 * replay — what `@bobbin/sim` explores schedules with). Without a policy the
 * queue is two ring buffers and costs nothing more.
 */
import { describe } from "../describe.js";
import { RunQueue } from "./run-queue.js";
import type { Task } from "./task.js";

/**
 * Chooses which ready task runs next: `run(main, { policy })`. `pick` gets the
 * ready tasks, oldest first, and returns the index of the one to run. Tasks
 * being cancelled are offered apart from, and before, ordinary ones (the
 * runtime's rule: cancellation is delivered promptly). A policy that throws or
 * returns an invalid index fails the run.
 *
 * @example
 * ```ts
 * const newestFirst: B.SchedulingPolicy = { pick: (ready) => ready.length - 1 };
 * await B.run(main, { policy: newestFirst });
 * ```
 */
export interface SchedulingPolicy {
  pick(ready: readonly Task[]): number;
  /**
   * Ask `pick` before every step, even when one task is ready (it must then
   * answer 0). Default false: only when there is a choice. A policy that
   * follows a run step by step (replaying or exploring schedules) needs it.
   */
  readonly everyStep?: boolean;
}

/** @internal The ready tasks of a domain. */
export class ReadyQueue {
  private readonly normal = new RunQueue<Task>(1024);
  private readonly urgent = new RunQueue<Task>(64);
  /** Under a policy: the ready tasks, oldest first. */
  private readonly normalList: Task[] = [];
  private readonly urgentList: Task[] = [];
  /** No policy: the two rings, oldest first. */
  private readonly fifo: boolean;
  /** The policy sees every step (`SchedulingPolicy.everyStep`). */
  private readonly everyStep: boolean;

  constructor(
    private readonly policy: SchedulingPolicy | null,
    /** Called when the policy throws or answers nonsense; the queue then runs the oldest task. */
    private readonly policyFailed: (error: unknown) => void,
  ) {
    this.fifo = policy === null;
    this.everyStep = policy?.everyStep === true;
  }

  push(task: Task): void {
    if (this.fifo) this.normal.push(task);
    else this.normalList.push(task);
  }

  pushUrgent(task: Task): void {
    if (this.fifo) this.urgent.push(task);
    else this.urgentList.push(task);
  }

  /** The next task to step, or `undefined` when none is ready. */
  shift(): Task | undefined {
    if (this.fifo) return this.urgent.isEmpty() ? this.normal.shift() : this.urgent.shift();
    const list = this.urgentList.length !== 0 ? this.urgentList : this.normalList;
    if (list.length === 0) return undefined;
    return list.splice(this.choose(list), 1)[0];
  }

  isEmpty(): boolean {
    if (this.policy === null) return this.normal.isEmpty() && this.urgent.isEmpty();
    return this.normalList.length === 0 && this.urgentList.length === 0;
  }

  /** Every ready task, urgent ones first (for diagnostics). */
  tasks(): Task[] {
    if (this.policy !== null) return [...this.urgentList, ...this.normalList];
    return [...this.urgent.items(), ...this.normal.items()];
  }

  private choose(list: readonly Task[]): number {
    if (list.length === 1 && !this.everyStep) return 0;
    let i: unknown;
    try {
      i = this.policy!.pick(list);
    } catch (error) {
      this.policyFailed(error);
      return 0;
    }
    if (!Number.isInteger(i) || (i as number) < 0 || (i as number) >= list.length) {
      this.policyFailed(
        new RangeError(`pick returned ${describe(i)} for ${list.length} ready tasks: return an index in [0, ${list.length})`),
      );
      return 0;
    }
    return i as number;
  }
}
