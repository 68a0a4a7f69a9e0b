/**
 * Awaiting children: `awaitTask`, `awaitExn`, `awaitAll`, `awaitOne`, `awaitFirst`.
 * Only the direct parent may await a task (Miou's second rule).
 */

import { describe } from "./describe.js";
import { failureOf, NotAChild } from "./errors.js";
import { currentTask } from "./kernel/current.js";
import { type Kernel, runningKernel } from "./kernel/kernel.js";
import { keepShapes } from "./kernel/shapes.js";
import { hasFailed, hasResolved, isPending, outcomeOf } from "./kernel/state.js";
import { Task, type Waiter } from "./kernel/task.js";
import { type Instruction, type Operation, RESUMED, SingleShot, SUSPENDED } from "./operation.js";
import { failed, ok, type Result } from "./result.js";

/**
 * @internal Checks that `child` is a task of the current task.
 * @throws TypeError when it is not a task; NotAChild when it is someone else's.
 */
export function checkChild(parent: Task, child: unknown, operation: string): Task {
  if (!(child instanceof Task)) throw new TypeError(`${operation} expects a task made by B.spawn or B.call, got ${describe(child)}`);
  if (child.parent !== parent) throw new NotAChild(parent, child, operation);
  return child;
}

function resultOf<T>(task: Task<T>): Result<T> {
  return hasResolved(task) ? ok(outcomeOf(task) as T) : failed(outcomeOf(task));
}

/** What `yield*` reads when awaiting a child that had already ended: reused, since `yield*` reads it at once. */
const ENDED: IteratorReturnResult<unknown> = { done: true, value: undefined };
const ENDED_ITERATOR: Iterator<Instruction, unknown, unknown> = {
  next: () => ENDED,
};

/** Waits for one child; `exn` returns its value or throws its error instead of a Result. */
class AwaitOp<T> extends SingleShot<unknown> implements Waiter {
  /** The kernel its task parked in. */
  private kernel: Kernel | null = null;

  constructor(
    private readonly target: Task<T>,
    private readonly exn: boolean,
  ) {
    super();
  }

  next(resumed?: unknown): IteratorResult<Instruction, unknown> {
    const target = this.target;
    if (resumed === undefined) {
      const parent = currentTask(this.exn ? "awaitExn()" : "awaitTask()");
      checkChild(parent, target, "await");
      const k = runningKernel()!;
      if (isPending(target)) {
        this.kernel = k;
        k.join(target);
        k.park(parent, this);
        return SUSPENDED;
      }
      k.consume(parent, target);
    }
    if (!this.exn) return { done: true, value: resultOf(target) };
    if (hasResolved(target)) return { done: true, value: outcomeOf(target) };
    throw outcomeOf(target);
  }

  childEnded(parent: Task): void {
    const k = this.kernel!;
    k.consume(parent, this.target);
    k.wake(parent, RESUMED);
  }

  detach(): void {
    this.kernel!.unjoin(this.target);
  }

  describe(): string {
    return `await ${this.target}`;
  }

  waitsFor(): Task {
    return this.target;
  }
}

// An await whose map outlives the awaits programs make (see kernel/shapes.ts): a parent that awaits
// its children in order parks once, on the first, and the rest have ended by then, so a run may
// leave no await alive, and a full collection after it threw away the kernel's ending of a child.
keepShapes(new AwaitOp(null as unknown as Task, true));

/**
 * `yield* B.awaitExn(t)` iterates the task itself: a child that has ended is
 * consumed without allocating anything; a pending one gets an `AwaitOp`.
 * (Not part of the published types: use `awaitExn`.)
 */
Object.defineProperty(Task.prototype, Symbol.iterator, {
  configurable: true,
  writable: true,
  value: function awaitExnIterator(this: Task): Iterator<Instruction, unknown, unknown> {
    if (isPending(this)) return new AwaitOp(this, true);
    const parent = currentTask("awaitExn()");
    checkChild(parent, this, "await");
    runningKernel()!.consume(parent, this);
    if (!hasResolved(this)) throw outcomeOf(this);
    ENDED.value = outcomeOf(this);
    return ENDED_ITERATOR;
  },
});

/**
 * Waits for a child to end and returns its {@link Result}. Awaiting an ended
 * child again returns the same result. Also exported as `await`.
 *
 * @example
 * ```ts
 * const r = yield* B.awaitTask(child);
 * if (r.ok) use(r.value); else report(r.error);
 * ```
 * @throws NotAChild when the current task is not the task's parent.
 * @throws TypeError when `task` is not a task.
 * @throws Cancelled when the current task is cancelled while waiting (the child is then cancelled too).
 */
export function awaitTask<T>(task: Task<T>): Operation<Result<T>> {
  return new AwaitOp(task, false) as Operation<Result<T>>;
}

/**
 * Waits for a child to end and returns its value, or throws its error
 * (Miou's `await_exn`). Awaiting a child that has already ended allocates nothing.
 *
 * @example
 * ```ts
 * const n = yield* B.awaitExn(B.spawn(function* () { return 42; }));
 * ```
 * @throws NotAChild when the current task is not the task's parent.
 * @throws TypeError when `task` is not a task.
 * @throws the child's error, or `Cancelled` when the child was cancelled.
 */
export function awaitExn<T>(task: Task<T>): Operation<T> {
  if (task instanceof Task) return task as unknown as Operation<T>;
  return new AwaitOp(task, true) as Operation<T>;
}

const enum Join {
  All = 0,
  One = 1,
  First = 2,
}

/** Waits on several children at once (all of them, the first to end, or the first then cancel the rest). */
class JoinOp<T> extends SingleShot<unknown> implements Waiter {
  /** The distinct tasks (a task listed twice is waited for once; its result is reported at each of its places). */
  private distinct: Task<T>[] = [];
  private remaining = 0;
  private chosen: Task<T> | null = null;
  /** The errors of the tasks `awaitFirst` cancelled that failed meanwhile (their cleanup threw). */
  private failedLosers: unknown[] | null = null;
  /** The kernel its task parked in. */
  private kernel: Kernel | null = null;

  constructor(
    private readonly tasks: readonly Task<T>[],
    private readonly mode: Join,
    private readonly name: string,
  ) {
    super();
  }

  next(resumed?: unknown): IteratorResult<Instruction, unknown> {
    if (resumed !== undefined) return { done: true, value: this.finish(currentTask(this.name), runningKernel()!) };
    const parent = currentTask(this.name);
    const k = runningKernel()!;
    this.kernel = k;
    const tasks = this.tasks;
    if (!Array.isArray(tasks)) throw new TypeError(`${this.name} expects an array of tasks, got ${describe(tasks)}`);
    if (tasks.length === 0 && this.mode !== Join.All) {
      throw new RangeError(`${this.name} needs at least one task: with none there is nothing to wait for`);
    }
    for (const t of tasks) checkChild(parent, t, "await");
    this.distinct = [...new Set(tasks)];
    let pending = 0;
    for (const t of this.distinct) if (isPending(t)) pending++;
    if (this.mode === Join.All) {
      if (pending === 0) return { done: true, value: this.finish(parent, k) };
      this.remaining = pending;
      this.join(parent, k);
      return SUSPENDED;
    }
    if (pending < this.distinct.length) {
      this.chosen = this.pickEnded(k);
      if (this.mode === Join.One || !this.cancelOthers(parent, k)) return { done: true, value: this.finish(parent, k) };
      k.park(parent, this);
      return SUSPENDED;
    }
    this.join(parent, k);
    return SUSPENDED;
  }

  childEnded(parent: Task, child: Task): void {
    const k = this.kernel!;
    if (this.mode === Join.All || this.chosen !== null) {
      if (this.mode === Join.First && hasFailed(child)) (this.failedLosers ??= []).push(outcomeOf(child));
      if (--this.remaining === 0) k.wake(parent, RESUMED);
      return;
    }
    this.chosen = child as Task<T>;
    this.unjoin(k);
    if (this.mode === Join.One || !this.cancelOthers(parent, k)) k.wake(parent, RESUMED);
  }

  detach(): void {
    this.unjoin(this.kernel!);
  }

  describe(): string {
    return `${this.name.slice(0, -2)} [${this.distinct.join(", ")}]`;
  }

  waitsFor(): Task[] {
    return this.distinct.filter(isPending);
  }

  private join(parent: Task, k: Kernel): void {
    for (const t of this.distinct) if (isPending(t)) k.join(t);
    k.park(parent, this);
  }

  private unjoin(k: Kernel): void {
    for (const t of this.distinct) k.unjoin(t);
  }

  /** A random ended task, preferring one that succeeded (as Miou's `await_one` and `await_first`). */
  private pickEnded(k: Kernel): Task<T> {
    const ended = this.distinct.filter((t) => !isPending(t));
    const resolved = ended.filter(hasResolved);
    const pool = resolved.length !== 0 ? resolved : ended;
    return pool.length === 1 ? pool[0]! : pool[k.random.below(pool.length)]!;
  }

  /** Cancels every task but the chosen one; true when some are still ending (the parent waits for them). */
  private cancelOthers(parent: Task, k: Kernel): boolean {
    let pending = 0;
    for (const t of this.distinct) {
      if (t === this.chosen) continue;
      if (!k.cancelChild(parent, t)) {
        k.join(t);
        pending++;
      }
    }
    if (pending === 0) return false;
    this.remaining = pending;
    return true;
  }

  private finish(parent: Task, k: Kernel): unknown {
    if (this.mode === Join.All) {
      for (const t of this.distinct) k.consume(parent, t);
      return this.tasks.map(resultOf);
    }
    const chosen = this.chosen!;
    k.consume(parent, chosen);
    const losers = this.failedLosers;
    if (losers !== null) throw failureOf(hasFailed(chosen) ? [outcomeOf(chosen), ...losers] : losers);
    return resultOf(chosen);
  }
}

/**
 * The results of a tuple of tasks, position by position.
 *
 * @example
 * ```ts
 * const [a, b]: B.Results<[B.Task<number>, B.Task<string>]> = yield* B.awaitAll([count, name]);
 * ```
 */
export type Results<Ts extends readonly Task<unknown>[]> = { -readonly [I in keyof Ts]: Result<Ts[I] extends Task<infer T> ? T : never> };

/**
 * The result type of any one task of a list.
 *
 * @example
 * ```ts
 * const first: B.ResultOfAny<[B.Task<number>, B.Task<string>]> = yield* B.awaitOne([count, name]);
 * ```
 */
export type ResultOfAny<Ts extends readonly Task<unknown>[]> = Result<Ts[number] extends Task<infer T> ? T : never>;

/**
 * Waits for every child in `tasks` and returns their results in the same
 * order, typed position by position. `awaitAll([])` is `[]`; a task listed
 * twice is awaited once and its result appears at both places.
 *
 * @example
 * ```ts
 * const [a, b] = yield* B.awaitAll([B.spawn(countWords), B.spawn(readTitle)]);   // Result<number>, Result<string>
 * ```
 * @throws NotAChild when one of the tasks is not a child of the current task.
 * @throws TypeError when `tasks` is not an array of tasks.
 * @throws Cancelled when the current task is cancelled while waiting.
 */
export function awaitAll<const Ts extends readonly Task<unknown>[]>(tasks: Ts): Operation<Results<Ts>>;
export function awaitAll<T>(tasks: readonly Task<T>[]): Operation<Result<T>[]>;
export function awaitAll(tasks: readonly Task<unknown>[]): Operation<unknown> {
  return new JoinOp(tasks, Join.All, "awaitAll()");
}

/**
 * Waits for the first of `tasks` to end and returns its result; the others
 * keep running (they still have to be awaited or cancelled). Among tasks that
 * had already ended, one that succeeded is preferred, then one is picked at
 * random (see `run`'s `seed`), as Miou's `await_one`.
 *
 * @example
 * ```ts
 * const first = yield* B.awaitOne([a, b]);
 * const rest = yield* B.awaitAll([a, b].filter((t) => t.status === "pending"));
 * ```
 * @throws RangeError when `tasks` is empty.
 * @throws NotAChild when one of the tasks is not a child of the current task.
 * @throws TypeError when `tasks` is not an array of tasks.
 */
export function awaitOne<const Ts extends readonly Task<unknown>[]>(tasks: Ts): Operation<ResultOfAny<Ts>>;
export function awaitOne<T>(tasks: readonly Task<T>[]): Operation<Result<T>>;
export function awaitOne(tasks: readonly Task<unknown>[]): Operation<unknown> {
  return new JoinOp(tasks, Join.One, "awaitOne()");
}

/**
 * Waits for the first of `tasks` to end, cancels all the others (waiting for
 * their cleanup) and returns the first one's result. When several had already
 * ended, a success is preferred over a failure. Every task is consumed.
 *
 * @example
 * ```ts
 * const r = yield* B.awaitFirst([B.spawn(accept, sock), B.spawn(waitForSigint)]);
 * ```
 * @throws RangeError when `tasks` is empty.
 * @throws NotAChild when one of the tasks is not a child of the current task.
 * @throws TypeError when `tasks` is not an array of tasks.
 * @throws what the tasks it cancelled threw meanwhile (their cleanup failed), after the first
 * one's error if it failed; a `Failures` when there are several.
 */
export function awaitFirst<const Ts extends readonly Task<unknown>[]>(tasks: Ts): Operation<ResultOfAny<Ts>>;
export function awaitFirst<T>(tasks: readonly Task<T>[]): Operation<Result<T>>;
export function awaitFirst(tasks: readonly Task<unknown>[]): Operation<unknown> {
  return new JoinOp(tasks, Join.First, "awaitFirst()");
}
