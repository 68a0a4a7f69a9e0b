/**
 * Awaiting children: `awaitTask`, `awaitExn`, `awaitAll`, `awaitOne`, `awaitFirst`.
 * Only the direct parent may await a task (Miou's second rule).
 */
import { NotAChild } from "./errors.js";
import { type Instruction, type Operation, RESUMED, SingleShot, SUSPENDED } from "./operation.js";
import { failed, ok, type Result } from "./result.js";
import { cancelChild, consume, currentTask } from "./scheduler.js";
import { F, State, Task, type Waiter } from "./task.js";

/** @internal */
export function checkChild(parent: Task, child: unknown, operation: string): Task {
  if (!(child instanceof Task)) throw new TypeError(`${operation} expects a task made by B.spawn or B.call`);
  const task: Task = child;
  if (task.parent !== parent) throw new NotAChild(parent.uid, task.uid, operation);
  return task;
}

function resultOf<T>(task: Task<T>): Result<T> {
  return task.state === State.Resolved ? ok(task.outcome as T) : failed(task.outcome);
}

/** Waits for one child; `exn` returns its value or throws its error instead of a Result. */
class AwaitOp<T> extends SingleShot<unknown> implements Waiter {
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
      if (target.state === State.Pending) {
        target.flags |= F.JOINED;
        parent.waiter = this;
        return SUSPENDED;
      }
      consume(parent, target);
    }
    if (!this.exn) return { done: true, value: resultOf(target) };
    if (target.state === State.Resolved) return { done: true, value: target.outcome };
    throw target.outcome;
  }

  childEnded(parent: Task): void {
    consume(parent, this.target);
    parent.sched.resume(parent, RESUMED);
  }

  detach(): void {
    this.target.flags &= ~F.JOINED;
  }
}

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
 * @throws Cancelled when the current task is cancelled while waiting (the child is then cancelled too).
 */
export function awaitTask<T>(task: Task<T>): Operation<Result<T>> {
  return new AwaitOp(task, false) as Operation<Result<T>>;
}

/**
 * Waits for a child to end and returns its value, or throws its error
 * (Miou's `await_exn`).
 *
 * @example
 * ```ts
 * const n = yield* B.awaitExn(B.spawn(function* () { return 42; }));
 * ```
 * @throws NotAChild when the current task is not the task's parent.
 * @throws the child's error, or `Cancelled` when the child was cancelled.
 */
export function awaitExn<T>(task: Task<T>): Operation<T> {
  return new AwaitOp(task, true) as Operation<T>;
}

const ALL = 0;
const ONE = 1;
const FIRST = 2;

/** Waits on several children at once (all of them, the first to end, or the first then cancel the rest). */
class JoinOp<T> extends SingleShot<unknown> implements Waiter {
  private remaining = 0;
  private chosen: Task<T> | null = null;

  constructor(
    private readonly tasks: readonly Task<T>[],
    private readonly mode: number,
    private readonly name: string,
  ) {
    super();
  }

  next(resumed?: unknown): IteratorResult<Instruction, unknown> {
    if (resumed !== undefined) return { done: true, value: this.finish(currentTask(this.name)) };
    const parent = currentTask(this.name);
    const tasks = this.tasks;
    if (!Array.isArray(tasks)) throw new TypeError(`${this.name} expects an array of tasks`);
    if (tasks.length === 0 && this.mode !== ALL) {
      throw new RangeError(`${this.name} needs at least one task: with none there is nothing to wait for`);
    }
    let pending = 0;
    for (const t of tasks) if (checkChild(parent, t, "await").state === State.Pending) pending++;
    if (this.mode === ALL) {
      if (pending === 0) return { done: true, value: this.finish(parent) };
      this.remaining = pending;
      this.join(parent);
      return SUSPENDED;
    }
    if (pending < tasks.length) {
      this.chosen = this.pickEnded(parent);
      if (this.mode === ONE || !this.cancelOthers(parent)) return { done: true, value: this.finish(parent) };
      return SUSPENDED;
    }
    this.join(parent);
    return SUSPENDED;
  }

  childEnded(parent: Task, child: Task): void {
    if (this.mode === ALL || this.chosen !== null) {
      if (--this.remaining === 0) parent.sched.resume(parent, RESUMED);
      return;
    }
    this.chosen = child as Task<T>;
    this.unjoin();
    if (this.mode === ONE || !this.cancelOthers(parent)) parent.sched.resume(parent, RESUMED);
  }

  detach(): void {
    this.unjoin();
  }

  private join(parent: Task): void {
    for (const t of this.tasks) if (t.state === State.Pending) t.flags |= F.JOINED;
    parent.waiter = this;
  }

  private unjoin(): void {
    for (const t of this.tasks) t.flags &= ~F.JOINED;
  }

  /** A random ended task, preferring one that succeeded (`awaitFirst`). */
  private pickEnded(parent: Task): Task<T> {
    const ended = this.tasks.filter((t) => t.state !== State.Pending);
    const resolved = this.mode === FIRST ? ended.filter((t) => t.state === State.Resolved) : [];
    const pool = resolved.length !== 0 ? resolved : ended;
    return pool[parent.sched.rng.below(pool.length)]!;
  }

  /** Cancels every task but the chosen one; true when some are still ending (the parent then waits). */
  private cancelOthers(parent: Task): boolean {
    let pending = 0;
    for (const t of this.tasks) {
      if (t === this.chosen) continue;
      if (!cancelChild(parent, t)) {
        t.flags |= F.JOINED;
        pending++;
      }
    }
    if (pending === 0) return false;
    this.remaining = pending;
    parent.waiter = this;
    return true;
  }

  private finish(parent: Task): unknown {
    if (this.mode === ALL) {
      return this.tasks.map((t) => {
        consume(parent, t);
        return resultOf(t);
      });
    }
    const chosen = this.chosen!;
    consume(parent, chosen);
    return resultOf(chosen);
  }
}

/**
 * Waits for every child in `tasks` and returns their results in the same
 * order. `awaitAll([])` is `[]`.
 *
 * @example
 * ```ts
 * const [a, b] = yield* B.awaitAll([B.spawn(f), B.spawn(g)]);
 * ```
 * @throws NotAChild when one of the tasks is not a child of the current task.
 * @throws Cancelled when the current task is cancelled while waiting.
 */
export function awaitAll<T>(tasks: readonly Task<T>[]): Operation<Result<T>[]> {
  return new JoinOp(tasks, ALL, "awaitAll()") as Operation<Result<T>[]>;
}

/**
 * Waits for the first of `tasks` to end and returns its result; the others
 * keep running (they still have to be awaited or cancelled). Among tasks that
 * had already ended, one is picked at random (see `run`'s `seed`).
 *
 * @example
 * ```ts
 * const first = yield* B.awaitOne([a, b]);
 * const rest = yield* B.awaitAll([a, b].filter((t) => t.status === "pending"));
 * ```
 * @throws RangeError when `tasks` is empty.
 * @throws NotAChild when one of the tasks is not a child of the current task.
 */
export function awaitOne<T>(tasks: readonly Task<T>[]): Operation<Result<T>> {
  return new JoinOp(tasks, ONE, "awaitOne()") as Operation<Result<T>>;
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
 */
export function awaitFirst<T>(tasks: readonly Task<T>[]): Operation<Result<T>> {
  return new JoinOp(tasks, FIRST, "awaitFirst()") as Operation<Result<T>>;
}
