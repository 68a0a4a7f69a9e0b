/**
 * Orphans collectors (Miou's `orphans`/`care`): where background children
 * wait to be found and consumed, since no task may be forgotten.
 */

import { awaitTask } from "./await.js";
import { type Instruction, type Operation, RESUMED, SingleShot, SUSPENDED } from "./operation.js";
import type { Result } from "./result.js";
import { RunQueue } from "./run-queue.js";
import { currentTask } from "./scheduler.js";
import type { Task, Waiter } from "./task.js";

/**
 * A collector of background children. The first task that uses it (spawns
 * into it or cares for it) owns it; only that task may use it afterwards,
 * since the tasks it holds are that task's children.
 *
 * @example
 * ```ts
 * const bg = B.orphans<void>();
 * for (;;) {
 *   for (let t = B.care(bg); t; t = B.care(bg)) yield* B.awaitExn(t);   // clean up
 *   const [client] = yield* accept(server);
 *   B.spawn({ orphans: bg }, echo, client);
 * }
 * ```
 */
export class Orphans<T = unknown> {
  /** @internal */ private owner: Task | null = null;
  /** @internal */ private readonly endedTasks = new RunQueue<Task<T>>(16);
  /** @internal Tasks adopted and not yet handed out by care/take. */
  private held = 0;
  /** @internal A task parked in `take`. */
  waiting: TakeOp<T> | null = null;

  /** How many tasks the collector still holds (running, or ended and not yet handed out). */
  get size(): number {
    return this.held;
  }

  /** @internal */
  claim(task: Task, operation: string): void {
    if (this.owner === null) this.owner = task;
    else if (this.owner !== task) {
      throw new TypeError(
        `task ${task.uid} cannot ${operation} an orphans collector owned by task ${this.owner.uid}: ` +
          "only the first task that uses a collector may use it (its tasks are that task's children)",
      );
    }
  }

  /** @internal */
  adopt(child: Task): void {
    child.getExtra().orphans = this as Orphans<unknown>;
    this.held++;
  }

  /** @internal One of its tasks ended. */
  ended(task: Task): void {
    const waiting = this.waiting;
    if (waiting !== null) {
      this.waiting = null;
      this.held--;
      waiting.handOut(task as Task<T>);
    } else this.endedTasks.push(task as Task<T>);
  }

  /** @internal */
  poll(): Task<T> | null | undefined {
    const task = this.endedTasks.shift();
    if (task !== undefined) {
      this.held--;
      return task;
    }
    return this.held === 0 ? undefined : null;
  }
}

/**
 * Makes an empty orphans collector.
 *
 * @example
 * ```ts
 * const bg = B.orphans<number>();
 * ```
 */
export function orphans<T = unknown>(): Orphans<T> {
  return new Orphans<T>();
}

/**
 * Miou's `care`: an ended task of the collector, ready to be awaited; `null`
 * when tasks remain but none has ended yet; `undefined` when the collector is
 * empty. Never suspends.
 *
 * @example
 * ```ts
 * for (let t = B.care(bg); t; t = B.care(bg)) yield* B.awaitExn(t);
 * ```
 * @throws TypeError outside a task, or when another task owns the collector.
 */
export function care<T>(collector: Orphans<T>): Task<T> | null | undefined {
  checkCollector(collector, "care");
  collector.claim(currentTask("care()"), "care for");
  return collector.poll();
}

class TakeOp<T> extends SingleShot<Task<T> | undefined> implements Waiter {
  private task: Task<T> | undefined = undefined;

  constructor(private readonly collector: Orphans<T>) {
    super();
  }

  next(resumed?: unknown): IteratorResult<Instruction, Task<T> | undefined> {
    if (resumed !== undefined) return { done: true, value: this.task };
    const parent = currentTask("take()");
    checkCollector(this.collector, "take");
    this.collector.claim(parent, "take from");
    const ready = this.collector.poll();
    if (ready !== null) return { done: true, value: ready };
    this.collector.waiting = this;
    parent.waiter = this;
    return SUSPENDED;
  }

  handOut(task: Task<T>): void {
    this.task = task;
    const parent = task.parent!;
    parent.sched.resume(parent, RESUMED);
  }

  detach(): void {
    this.collector.waiting = null;
  }
}

/**
 * Like `care`, but waits for a task to end when none has: returns an ended
 * task to await, or `undefined` when the collector is empty.
 *
 * @example
 * ```ts
 * const t = yield* B.take(bg);
 * if (t) yield* B.awaitExn(t);
 * ```
 * @throws TypeError outside a task, or when another task owns the collector.
 * @throws Cancelled when the current task is cancelled while waiting.
 */
export function take<T>(collector: Orphans<T>): Operation<Task<T> | undefined> {
  return new TakeOp(collector);
}

/**
 * Waits until every task of the collector has ended, awaits them all and
 * returns their results in the order they ended (the book's `terminate`).
 *
 * @example
 * ```ts
 * const results = yield* B.get(bg);
 * for (const r of results) if (!r.ok) throw r.error;
 * ```
 * @throws TypeError outside a task, or when another task owns the collector.
 * @throws Cancelled when the current task is cancelled while waiting.
 */
export function* get<T>(collector: Orphans<T>): Generator<Instruction, Result<T>[], unknown> {
  const results: Result<T>[] = [];
  for (let task = yield* take(collector); task !== undefined; task = yield* take(collector)) {
    results.push(yield* awaitTask(task));
  }
  return results;
}

function checkCollector(collector: unknown, name: string): void {
  if (!(collector instanceof Orphans)) throw new TypeError(`${name}() expects a collector made by B.orphans()`);
}
