/**
 * Orphans collectors (Miou's `orphans`, `care`, `take`, `get`): where
 * background children wait to be found and consumed, since no task may be
 * forgotten.
 */

import { describe } from "./describe.js";
import { HeldTasks } from "./held-tasks.js";
import { currentTask } from "./kernel/current.js";
import { type Kernel, runningKernel } from "./kernel/kernel.js";
import { RunQueue } from "./kernel/run-queue.js";
import { hasResolved, outcomeOf } from "./kernel/state.js";
import type { Task, Waiter } from "./kernel/task.js";
import { coldOf, familyOf } from "./kernel/tree.js";
import { type Instruction, type Operation, RESUMED, SingleShot, SUSPENDED } from "./operation.js";
import { failed, ok, type Result } from "./result.js";

/**
 * A collector of background children. The first task that uses it (spawns
 * into it, or cares for, takes or gets from it) owns it; only that task may
 * use it afterwards, since the tasks it holds are that task's children.
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
  /** @internal Every task the collector holds, in the order they were spawned. */
  private readonly held = new HeldTasks<Task<T>>();
  /** @internal Held tasks that have ended, in the order they ended (some may have been taken since). */
  private readonly endedTasks = new RunQueue<Task<T>>(16);
  /** @internal A task parked in `get`. */
  private waiting: GetOp<T> | null = null;

  /** How many tasks the collector holds (running, or ended and not yet handed out). Miou's `length`. */
  get size(): number {
    return this.held.size;
  }

  /** @internal */
  claim(task: Task, operation: string): void {
    if (this.owner === null) this.owner = task;
    else if (this.owner !== task) {
      throw new TypeError(
        `${task} cannot ${operation} an orphans collector owned by ${this.owner}: ` +
          "only the first task that uses a collector may use it (its tasks are that task's children)",
      );
    }
  }

  /** @internal */
  adopt(child: Task): void {
    // Its owner tells it of its children's ends while it holds any: a
    // collector joins the owner's list when it takes its first task and
    // leaves it once empty, so the list never grows with collectors used and
    // emptied one after another.
    if (this.held.size === 0) (familyOf(this.owner!).collectors ??= []).push(this as Orphans<unknown>);
    this.held.add(child as Task<T>);
  }

  /** @internal A child of its owner ended: if it holds that task, the task is ready to be handed out (returns whether it held it). */
  ended(task: Task): boolean {
    if (!this.held.has(task as Task<T>)) return false;
    const waiting = this.waiting;
    if (waiting !== null) {
      this.waiting = null;
      waiting.ended(this.release(task as Task<T>));
    } else this.endedTasks.push(task as Task<T>);
    return true;
  }

  /** @internal The oldest ended task still held, handed out; `null` when none has ended; `undefined` when empty. */
  nextEnded(): Task<T> | null | undefined {
    for (let task = this.endedTasks.shift(); task !== undefined; task = this.endedTasks.shift()) {
      if (this.held.has(task)) return this.release(task);
    }
    return this.held.size === 0 ? undefined : null;
  }

  /** @internal Any held task, handed out at once (the oldest), or `undefined`. */
  any(): Task<T> | undefined {
    const first = this.held.first();
    return first === undefined ? undefined : this.release(first);
  }

  /** @internal The ended tasks still held, in the order they ended; those handed out since (by `get`, `take`) leave the queue here, which would keep them alive otherwise. */
  endedHeld(): Task<T>[] {
    const ended: Task<T>[] = [];
    for (let task = this.endedTasks.shift(); task !== undefined; task = this.endedTasks.shift()) if (this.held.has(task)) ended.push(task);
    for (const task of ended) this.endedTasks.push(task);
    return ended;
  }

  /** @internal */
  park(op: GetOp<T>): void {
    this.waiting = op;
  }

  /** @internal */
  unpark(): void {
    this.waiting = null;
  }

  /** @internal The task leaves the collector: its parent is now responsible for it. */
  release(task: Task<T>): Task<T> {
    this.held.delete(task);
    if (this.held.size === 0) {
      while (this.endedTasks.shift() !== undefined); // all handed out: nothing there is held any more
      const family = coldOf(this.owner!)!;
      const collectors = family.collectors!;
      if (collectors.length === 1) family.collectors = null;
      else collectors.splice(collectors.indexOf(this as Orphans<unknown>), 1);
    }
    return task;
  }
}

/**
 * Makes an empty orphans collector.
 *
 * @example
 * ```ts
 * const bg = B.orphans<number>();
 * ```
 * @throws never.
 */
export function orphans<T = unknown>(): Orphans<T> {
  return new Orphans<T>();
}

/**
 * Miou's `care`: an ended task of the collector, ready to be awaited; `null`
 * when tasks remain but none has ended yet; `undefined` when the collector is
 * empty. Never suspends. The task is the caller's to await.
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
  return collector.nextEnded();
}

/**
 * Miou's `take`: hands over a task of the collector at once, whatever its
 * state (running or ended; the oldest it holds), or `undefined` when the
 * collector is empty. Never suspends. The caller must await or cancel it.
 *
 * @example
 * ```ts
 * for (let t = B.take(bg); t; t = B.take(bg)) yield* B.cancel(t);   // stop every background task
 * ```
 * @throws TypeError outside a task, or when another task owns the collector.
 */
export function take<T>(collector: Orphans<T>): Task<T> | undefined {
  checkCollector(collector, "take");
  collector.claim(currentTask("take()"), "take from");
  return collector.any();
}

function resultOf<T>(task: Task<T>): Result<T> {
  return hasResolved(task) ? ok(outcomeOf(task) as T) : failed(outcomeOf(task));
}

class GetOp<T> extends SingleShot<Result<T> | undefined> implements Waiter {
  private task: Task<T> | null = null;
  private kernel: Kernel | null = null;

  constructor(private readonly collector: Orphans<T>) {
    super();
  }

  next(resumed?: unknown): IteratorResult<Instruction, Result<T> | undefined> {
    const parent = currentTask("get()");
    const k = runningKernel()!;
    if (resumed !== undefined) return { done: true, value: this.consume(parent, k, this.task!) };
    const collector = this.collector;
    checkCollector(collector, "get");
    collector.claim(parent, "get from");
    if (collector.size === 0) return { done: true, value: undefined };
    const ended = collector.endedHeld();
    if (ended.length !== 0) {
      const resolved = ended.filter(hasResolved);
      const pool = resolved.length !== 0 ? resolved : ended;
      const task = pool.length === 1 ? pool[0]! : pool[k.random.below(pool.length)]!;
      return { done: true, value: this.consume(parent, k, collector.release(task)) };
    }
    collector.park(this);
    this.kernel = k;
    k.park(parent, this);
    return SUSPENDED;
  }

  /** @internal A held task ended (it left the collector): its result is the answer. */
  ended(task: Task<T>): void {
    this.task = task;
    const parent = task.parent!;
    this.kernel!.wake(parent, RESUMED);
  }

  detach(): void {
    this.collector.unpark();
  }

  describe(): string {
    return `get from an orphans collector of ${this.collector.size} task(s)`;
  }

  private consume(parent: Task, k: Kernel, task: Task<T>): Result<T> {
    k.consume(parent, task);
    return resultOf(task);
  }
}

/**
 * Miou's `get`: waits until one task of the collector has ended, consumes it
 * and returns its result; `undefined` when the collector is empty. The other
 * tasks are not cancelled. Among tasks that had already ended, one that
 * succeeded is preferred, then one is picked at random (see `run`'s `seed`).
 *
 * @example
 * ```ts
 * for (let r = yield* B.get(bg); r !== undefined; r = yield* B.get(bg)) if (!r.ok) console.error(r.error);
 * ```
 * @throws TypeError outside a task, or when another task owns the collector.
 * @throws Cancelled when the current task is cancelled while waiting.
 */
export function get<T>(collector: Orphans<T>): Operation<Result<T> | undefined> {
  return new GetOp(collector);
}

/**
 * Waits until every task of the collector has ended, consumes them all and
 * returns their results, in the order `get` hands them out (the book's `terminate`).
 *
 * @example
 * ```ts
 * for (const r of yield* B.drain(bg)) if (!r.ok) throw r.error;
 * ```
 * @throws TypeError outside a task, or when another task owns the collector.
 * @throws Cancelled when the current task is cancelled while waiting.
 */
export function* drain<T>(collector: Orphans<T>): Generator<Instruction, Result<T>[], unknown> {
  checkCollector(collector, "drain");
  const results: Result<T>[] = [];
  for (let r = yield* get(collector); r !== undefined; r = yield* get(collector)) results.push(r);
  return results;
}

function checkCollector(collector: unknown, name: string): void {
  if (!(collector instanceof Orphans)) throw new TypeError(`${name}() expects a collector made by B.orphans(), got ${describe(collector)}`);
}
