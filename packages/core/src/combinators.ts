/**
 * Combinators over operations: `all`, `any`, `race`. Each operation runs as a
 * child task of the caller (named `all[0]`, `race[1]`…), so the tree's rules
 * apply to it; the combinator returns only once every one of them has ended.
 */
import { describe } from "./describe.js";
import { failureOf } from "./errors.js";
import { currentTask } from "./kernel/current.js";
import { type Kernel, runningKernel } from "./kernel/kernel.js";
import { hasFailed, hasResolved, outcomeOf, wasCancelled } from "./kernel/state.js";
import { Task } from "./kernel/task.js";
import type { Instruction, Operation } from "./operation.js";
import { makeChild } from "./spawn.js";
import { Supervisor } from "./supervisor.js";

/**
 * The value an operation gives to `yield*`.
 *
 * @example
 * ```ts
 * type N = B.OperationValue<B.Operation<number>>;   // number
 * ```
 */
export type OperationValue<O> = O extends Operation<infer T> ? T : never;

/**
 * The values of a tuple of operations, position by position.
 *
 * @example
 * ```ts
 * type V = B.OperationValues<[B.Operation<number>, B.Operation<string>]>;   // [number, string]
 * ```
 */
export type OperationValues<Os extends readonly Operation<unknown>[]> = { -readonly [I in keyof Os]: OperationValue<Os[I]> };

const enum Mode {
  All = 0,
  Any = 1,
  Race = 2,
}

const NAMES = ["all", "any", "race"] as const;

/** The body of an operation's task. */
function* operation(op: Operation<unknown>): Generator<Instruction, unknown, unknown> {
  return yield* op;
}

/** Runs each operation in a child and decides, as they end, when the others are cancelled. */
class Combinator extends Supervisor {
  readonly tasks: Task[] = [];
  /** The child that decided the outcome: all → the first failure; any → the first success; race → the first to end. */
  decided: Task | null = null;

  constructor(
    k: Kernel,
    owner: Task,
    private readonly mode: Mode,
  ) {
    super(k, owner);
  }

  start(operations: readonly Operation<unknown>[]): void {
    const name = NAMES[this.mode];
    for (let i = 0; i < operations.length; i++) {
      const child = makeChild(this.k, this.owner, this.owner, { name: `${name}[${i}]` }, operation, 1, operations[i], name);
      this.tasks.push(child);
      this.add(child);
    }
  }

  protected ended(child: Task): void {
    if (this.decided !== null || this.stopping) return;
    const decides = this.mode === Mode.All ? hasFailed(child) : this.mode === Mode.Any ? hasResolved(child) : !wasCancelled(child);
    if (!decides) return;
    this.decided = child;
    if (hasFailed(child)) this.failed.push(outcomeOf(child));
    this.stop();
  }

  /**
   * The combinator's value once every child has ended, or what it throws: the
   * deciding failure, then what the others threw while cancelled (which a
   * success does not hide either).
   */
  outcome(): unknown {
    if (this.failed.length !== 0) throw failureOf(this.failed);
    const decided = this.decided;
    if (this.mode === Mode.All) return this.tasks.map(outcomeOf);
    if (decided !== null) return decided.value;
    throw new AggregateError(
      this.tasks.map(outcomeOf),
      `any(): all ${this.tasks.length} operations failed (their errors are in this error's \`errors\`, in order)`,
    );
  }

  describe(): string {
    return `${NAMES[this.mode]} [${this.tasks.join(", ")}]`;
  }
}

function* combine(mode: Mode, operations: readonly Operation<unknown>[]): Generator<Instruction, unknown, unknown> {
  const name = NAMES[mode];
  const owner = currentTask(`${name}()`);
  checkOperations(operations, name, mode === Mode.Race);
  const c = new Combinator(runningKernel()!, owner, mode);
  try {
    c.start(operations);
  } catch (error) {
    // A spawn hook refused one: the children already started are stopped and awaited.
    c.stop();
    yield* c.supervise();
    throw failureOf([error, ...c.failed]);
  }
  yield* c.supervise();
  return c.outcome();
}

function checkOperations(operations: unknown, name: string, needsOne: boolean): asserts operations is readonly Operation<unknown>[] {
  if (!Array.isArray(operations)) throw new TypeError(`${name}() expects an array of operations, got ${describe(operations)}`);
  if (needsOne && operations.length === 0) {
    throw new RangeError(`${name}() needs at least one operation: with none, nothing can end first`);
  }
  for (let i = 0; i < operations.length; i++) {
    const op: unknown = operations[i];
    if (op instanceof Task) {
      throw new TypeError(`${name}() runs operations, and got a task at index ${i}: wait for tasks with awaitAll, awaitOne or awaitFirst`);
    }
    if (op === null || typeof op !== "object" || typeof (op as Operation<unknown>)[Symbol.iterator] !== "function") {
      throw new TypeError(`${name}() expects an array of operations (used with yield*), got ${describe(op)} at index ${i}`);
    }
  }
}

/**
 * Runs every operation at once, each in a child task, and returns their
 * values in the same order, typed position by position. The first failure
 * cancels the others, waits for their cleanup, and is thrown. `all([])` is `[]`.
 *
 * @example
 * ```ts
 * const [user, posts] = yield* B.all([fetchUser(id), fetchPosts(id)]);   // [User, Post[]]
 * ```
 * @throws the first error one of the operations threw (the others were cancelled); a
 * `Failures`, that error first, when others failed while cancelled (their cleanup threw).
 * @throws TypeError when `operations` is not an array of operations (tasks are
 * awaited with `awaitAll`); outside a task.
 * @throws Cancelled when the current task is cancelled meanwhile (after the children ended).
 */
export function all<const Os extends readonly Operation<unknown>[]>(operations: Os): Operation<OperationValues<Os>> {
  return combine(Mode.All, operations) as Operation<OperationValues<Os>>;
}

/**
 * Runs every operation at once, each in a child task, and returns the value
 * of the first to succeed; the others are then cancelled and their cleanup
 * awaited. Failures are ignored until all have failed: then an
 * `AggregateError` carries their errors in the order of the operations
 * (`any([])` throws one with none, as `Promise.any`).
 *
 * @example
 * ```ts
 * const page = yield* B.any([fetchFrom(mirrorA), fetchFrom(mirrorB)]);
 * ```
 * @throws AggregateError when every operation failed.
 * @throws what an operation cancelled after the first success threw meanwhile (its cleanup
 * failed); a `Failures` when several did: a success does not hide them.
 * @throws TypeError when `operations` is not an array of operations; outside a task.
 * @throws Cancelled when the current task is cancelled meanwhile (after the children ended).
 */
export function any<const Os extends readonly Operation<unknown>[]>(operations: Os): Operation<OperationValue<Os[number]>> {
  return combine(Mode.Any, operations) as Operation<OperationValue<Os[number]>>;
}

/**
 * Runs every operation at once, each in a child task, and settles like the
 * first to end: its value is returned, or its error thrown. The others are
 * cancelled and their cleanup awaited first.
 *
 * @example
 * ```ts
 * const reply = yield* B.race([request(conn), failAfter(5000)]);
 * ```
 * @throws the first operation's error, when the first to end failed; the errors the others
 * threw while cancelled follow it (a `Failures`), or are thrown alone after a success.
 * @throws RangeError when `operations` is empty.
 * @throws TypeError when `operations` is not an array of operations; outside a task.
 * @throws Cancelled when the current task is cancelled meanwhile (after the children ended).
 */
export function race<const Os extends readonly Operation<unknown>[]>(operations: Os): Operation<OperationValue<Os[number]>> {
  return combine(Mode.Race, operations) as Operation<OperationValue<Os[number]>>;
}
