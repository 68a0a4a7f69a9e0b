/**
 * Task-local slots: a value per task, for packages built on core (such as
 * `@bobbin/sync`'s Ownership, which keeps each task's resources in one).
 */

import { describe } from "./describe.js";
import { currentTask } from "./kernel/current.js";
import { Task } from "./kernel/task.js";
import { coldOf, familyOf } from "./kernel/tree.js";

let slots = 0;

/**
 * A slot holding one value per task, created on first read by `init(task)`.
 * Values are not inherited by children.
 *
 * @example
 * ```ts
 * const requestId = new B.TaskLocal("requestId", () => 0);
 * requestId.set(42);
 * requestId.get();          // 42 in this task, 0 in any other
 * ```
 */
export class TaskLocal<T> {
  private readonly index = slots++;

  /** @throws TypeError when `init` is not a function. */
  constructor(
    readonly name: string,
    private readonly init: (task: Task<unknown>) => T,
  ) {
    if (typeof init !== "function") throw new TypeError(`TaskLocal(${name}) expects an init function, got ${describe(init)}`);
  }

  /**
   * The slot's value for `task` (by default the current task).
   * @throws TypeError outside a task when no task is given, or when `task` is not a task.
   */
  get(task?: Task<unknown>): T {
    const target = this.target(task, "get");
    const locals = (familyOf(target).locals ??= []);
    if (this.index in locals) return locals[this.index] as T;
    const value = this.init(target);
    locals[this.index] = value;
    return value;
  }

  /**
   * Sets the slot's value for `task` (by default the current task).
   * @throws TypeError outside a task when no task is given, or when `task` is not a task.
   */
  set(value: T, task?: Task<unknown>): void {
    (familyOf(this.target(task, "set")).locals ??= [])[this.index] = value;
  }

  /**
   * Whether `task` (by default the current one) has a value in the slot yet.
   * @throws TypeError outside a task when no task is given, or when `task` is not a task.
   */
  has(task?: Task<unknown>): boolean {
    const locals = coldOf(this.target(task, "has"))?.locals;
    return locals != null && this.index in locals;
  }

  private target(task: Task<unknown> | undefined, method: string): Task {
    if (task === undefined) return currentTask(`${this.name}.${method}()`);
    if (!(task instanceof Task))
      throw new TypeError(`${this.name}.${method}(…, task) expects a task made by B.spawn or B.call, got ${describe(task)}`);
    return task;
  }
}
