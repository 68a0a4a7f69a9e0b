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
 * const newestFirst: L.SchedulingPolicy = { pick: (ready) => ready.length - 1 };
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

/** @internal The ready tasks of a domain: ordinary steps, and cancellation and cleanup work ahead of them. */
export interface ReadyQueue {
  push(task: Task): void;
  pushUrgent(task: Task): void;
  /** The next task to step, or `undefined` when none is ready. */
  shift(): Task | undefined;
  isEmpty(): boolean;
  /** How many tasks are ready (for diagnostics). */
  readonly length: number;
}

/** @internal The ready queue of a domain: FIFO without a policy, the policy's choice with one. */
export function readyQueue(policy: SchedulingPolicy | null, policyFailed: (error: unknown) => void): ReadyQueue {
  return policy === null ? new FifoQueue() : new PolicyQueue(policy, policyFailed);
}

/**
 * The FIFO of the hot path: ordinary steps in one ring, cancellation and
 * cleanup work in another, looked at only while it holds something.
 */
class FifoQueue implements ReadyQueue {
  private readonly normal = new RunQueue<Task>(1024);
  private readonly urgent = new RunQueue<Task>(64);
  private urgentCount = 0;

  push(task: Task): void {
    this.normal.push(task);
  }

  pushUrgent(task: Task): void {
    this.urgent.push(task);
    this.urgentCount++;
  }

  shift(): Task | undefined {
    if (this.urgentCount === 0) return this.normal.shift();
    this.urgentCount--;
    return this.urgent.shift();
  }

  isEmpty(): boolean {
    return this.urgentCount === 0 && this.normal.isEmpty();
  }

  get length(): number {
    return this.normal.size + this.urgentCount;
  }
}

/** The ready tasks under a policy: lists, oldest first, from which the policy picks. */
class PolicyQueue implements ReadyQueue {
  private readonly normal: Task[] = [];
  private readonly urgent: Task[] = [];
  /** The policy sees every step (`SchedulingPolicy.everyStep`). */
  private readonly everyStep: boolean;

  constructor(
    private readonly policy: SchedulingPolicy,
    /** Called when the policy throws or answers nonsense; the queue then runs the oldest task. */
    private readonly policyFailed: (error: unknown) => void,
  ) {
    this.everyStep = policy.everyStep === true;
  }

  push(task: Task): void {
    this.normal.push(task);
  }

  pushUrgent(task: Task): void {
    this.urgent.push(task);
  }

  get length(): number {
    return this.normal.length + this.urgent.length;
  }

  shift(): Task | undefined {
    const list = this.urgent.length !== 0 ? this.urgent : this.normal;
    if (list.length === 0) return undefined;
    return list.splice(this.choose(list), 1)[0];
  }

  isEmpty(): boolean {
    return this.normal.length === 0 && this.urgent.length === 0;
  }

  private choose(list: readonly Task[]): number {
    if (list.length === 1 && !this.everyStep) return 0;
    let i: unknown;
    try {
      i = this.policy.pick(list);
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
