/**
 * Task-local slots: a value per task, for packages built on core (such as
 * `@bobbin/sync`'s Ownership, which keeps each task's resources in one).
 */
import { currentTask } from "./scheduler.js";
import type { Task } from "./task.js";

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

  constructor(
    readonly name: string,
    private readonly init: (task: Task<unknown>) => T,
  ) {
    if (typeof init !== "function") throw new TypeError(`TaskLocal(${name}) expects an init function`);
  }

  /**
   * The slot's value for `task` (by default the current task).
   * @throws TypeError outside a task when no task is given.
   */
  get(task?: Task<unknown>): T {
    const target = task ?? currentTask(`${this.name}.get()`);
    const locals = (target.getExtra().locals ??= []);
    if (this.index in locals) return locals[this.index] as T;
    const value = this.init(target);
    locals[this.index] = value;
    return value;
  }

  /**
   * Sets the slot's value for `task` (by default the current task).
   * @throws TypeError outside a task when no task is given.
   */
  set(value: T, task?: Task<unknown>): void {
    const target = task ?? currentTask(`${this.name}.set()`);
    (target.getExtra().locals ??= [])[this.index] = value;
  }

  /** Whether `task` (by default the current one) has a value in the slot yet. */
  has(task?: Task<unknown>): boolean {
    const target = task ?? currentTask(`${this.name}.has()`);
    const locals = target.extra?.locals;
    return locals != null && this.index in locals;
  }
}
