/**
 * `select`: wait on several cases at once; exactly one of them happens.
 *
 * Core defines the protocol; the cases live where their resources do
 * (`@bobbin/sync`'s channels, core's `timeout` and `once`). A select runs in
 * two passes, as Go's does:
 *
 * 1. **offer**: each case, in order, completes at once if it can — a receive
 *    from a channel holding a value takes it — by claiming the select's
 *    {@link Choice}. The first case that can, wins; the others are not asked.
 * 2. **enlist**: otherwise each case registers a waiter that holds the choice
 *    (a receiver in the channel's queue, a timer, a listener), and the task
 *    parks. Whoever completes one of them first — a sending task, a timer, an
 *    event — claims the choice for that case; a choice is claimed at most
 *    once, so every other party finds it decided and leaves it alone.
 *
 * When the task resumes, or leaves because it was cancelled, every case is
 * withdrawn (its waiter unregistered), so the losers have no effect: a send
 * that lost delivered nothing, a receive that lost took nothing. A claimed
 * choice always completes: core never replaces a pending resumption with a
 * cancellation, so a task that won a value has it, and `Cancelled` arrives at
 * its next suspension point.
 */
import { describe } from "./describe.js";
import { currentTask } from "./kernel/current.js";
import { type Kernel, runningKernel } from "./kernel/kernel.js";
import { keepShapes } from "./kernel/shapes.js";
import type { Task } from "./kernel/task.js";
import { type Instruction, type Operation, RESUMED, SUSPENDED } from "./operation.js";

/** What `yield*` reads when a select ends: one object, reused, since `yield*` reads it at once. */
const FINISHED: IteratorReturnResult<unknown> = { done: true, value: undefined };

const OFFERING = 0;
const WAITING = 1;
const DECIDED = 2;
const ABANDONED = 3;

/**
 * One case of a {@link select}, and an operation on its own (a select of one
 * case): `yield* ch.recv()`. Packages implement the three steps of the
 * protocol (see the package README):
 *
 * - `offer(choice, index)`: if the case can happen now, make it happen and
 *   `choice.claim(index, value)` (or `choice.fail(index, error)`); otherwise
 *   do nothing. Never waits.
 * - `enlist(choice, index)`: register a waiter that, when the case can happen,
 *   makes it happen only if `choice.claim(index, value)` (or `fail`) returns
 *   true, and otherwise leaves everything as it was. Returns the registration.
 *   It must not complete anything itself (the select's other cases are being
 *   registered).
 * - `withdraw(registration)`: forget the waiter. Called once for every
 *   enlisted case — the winner's too, whose waiter its claimant may have
 *   removed already — when the task resumes or is cancelled.
 *
 * @example
 * ```ts
 * class Tick extends L.SelectCase<void, NodeJS.Timeout> {
 *   offer(): void {}
 *   enlist(choice: L.Choice, index: number) { return setInterval(() => choice.claim(index, undefined), 10); }
 *   withdraw(timer: NodeJS.Timeout) { clearInterval(timer); }
 * }
 * yield* new Tick();
 * ```
 * @throws on its own (`yield*`), what a select of this one case throws: its
 * error, `Cancelled`, or a TypeError outside a task.
 */
export abstract class SelectCase<T, R = unknown> implements Operation<T> {
  /** Makes the case happen now if it can, claiming `choice` (see the class comment). */
  abstract offer(choice: Choice, index: number): void;
  /** Registers a waiter that claims `choice` when the case can happen; returns the registration. */
  abstract enlist(choice: Choice, index: number): R;
  /** Forgets a registration `enlist` returned. */
  abstract withdraw(registration: R): void;

  /**
   * What a task waiting on this case waits for, in words, for dumps
   * ("receive on Channel#3"); `registration` is what `enlist` returned.
   * Override it: the default names the case's class.
   */
  describe(registration: R): string {
    void registration;
    return `a ${this.constructor.name} case`;
  }

  /** The case alone: waits until it happens and evaluates to its value. */
  [Symbol.iterator](): Iterator<Instruction, T, unknown> {
    return new Choice([this], true) as unknown as Iterator<Instruction, T, unknown>;
  }
}

function describeCase(c: SelectCase<unknown>, registration: unknown): string {
  try {
    return c.describe(registration);
  } catch (error) {
    return `a case whose describe threw (${String(error)})`;
  }
}

/**
 * The decision of one select: claimed at most once, by the party that makes
 * one of its cases happen. Cases receive it in `offer` and `enlist`.
 *
 * @example
 * ```ts
 * // in a channel's send, for a receiver waiting with (choice, index):
 * if (receiver.choice.claim(receiver.index, value)) return true;   // delivered
 * // false: that select was decided elsewhere (or its task left): try the next receiver
 * ```
 * @throws RangeError from `claim`/`fail` for an index that is not one of the select's.
 */
export class Choice {
  /** @internal */ private state = OFFERING;
  /** @internal */ private winner = -1;
  /** @internal */ private outcome: unknown = undefined;
  /** @internal */ private failed = false;
  /** @internal */ private task: Task | null = null;
  /** @internal */ private kernel: Kernel | null = null;
  /** @internal What `enlist` returned, case by case. */
  private registrations: unknown[] | null = null;

  /** @internal */
  constructor(
    private readonly cases: readonly SelectCase<unknown>[],
    /** A case used on its own: the value is the case's, not `{ index, value }`. */
    private readonly lone: boolean,
  ) {}

  /** Whether the choice can still be claimed: not decided, and its task has not left. */
  get isOpen(): boolean {
    return this.state <= WAITING;
  }

  /**
   * Decides the select for case `index`, which happened with `value`; wakes
   * its task. Returns false, doing nothing, when the choice was decided
   * already or its task left: the caller must then not make the case happen
   * (a sender keeps its value and tries its next receiver).
   *
   * @example
   * ```ts
   * if (w.choice.claim(w.index, value)) queue.remove(w);
   * ```
   * @throws RangeError when `index` is not the index of one of the select's cases.
   */
  claim(index: number, value: unknown): boolean {
    return this.decide(index, value, false);
  }

  /**
   * Decides the select for case `index`, which happened with an error: the
   * select throws `error`. Returns false when the choice was decided already
   * or its task left.
   *
   * @example
   * ```ts
   * sender.choice.fail(sender.index, new ChannelClosed());
   * ```
   * @throws RangeError when `index` is not the index of one of the select's cases.
   */
  fail(index: number, error: unknown): boolean {
    return this.decide(index, error, true);
  }

  /** @internal */
  [Symbol.iterator](): this {
    return this;
  }

  /** @internal */
  next(resumed?: unknown): IteratorResult<Instruction, unknown> {
    if (resumed !== undefined) return this.finish();
    const task = currentTask("select()");
    const cases = this.cases;
    checkCases(cases);
    this.task = task;
    this.kernel = runningKernel()!;
    for (let i = 0; i < cases.length; i++) {
      cases[i]!.offer(this, i);
      if (this.state !== OFFERING) return this.finish();
    }
    const registrations: unknown[] = [];
    this.registrations = registrations;
    for (let i = 0; i < cases.length; i++) {
      try {
        registrations.push(cases[i]!.enlist(this, i));
      } catch (error) {
        this.state = ABANDONED;
        this.withdrawAll();
        throw error;
      }
      if (this.state !== OFFERING) return this.finish();
    }
    this.state = WAITING;
    this.kernel.park(task, this);
    return SUSPENDED;
  }

  /** @internal Cancellation is delivered through `yield*` (the cases were withdrawn by `detach`). */
  throw(error: unknown): IteratorResult<Instruction, unknown> {
    throw error;
  }

  /** @internal */
  return(value?: unknown): IteratorResult<Instruction, unknown> {
    this.state = ABANDONED;
    this.withdrawAll();
    return { done: true, value };
  }

  /** @internal The kernel: the task is woken to leave (cancelled or interrupted). */
  detach(): void {
    this.state = ABANDONED;
    this.withdrawAll();
  }

  /** @internal */
  describe(): string {
    const registrations = this.registrations ?? [];
    const cases = this.cases.map((c, i) => describeCase(c, registrations[i]));
    return this.lone ? cases[0]! : `select over [${cases.join(", ")}]`;
  }

  /** @internal */
  private decide(index: number, value: unknown, failed: boolean): boolean {
    const state = this.state;
    if (state > WAITING) return false;
    if (!Number.isInteger(index) || index < 0 || index >= this.cases.length) {
      throw new RangeError(`a select case claimed its choice with index ${describe(index)}: give the index its offer or enlist received`);
    }
    this.state = DECIDED;
    this.winner = index;
    this.outcome = value;
    this.failed = failed;
    if (state === WAITING) this.kernel!.wake(this.task!, RESUMED);
    return true;
  }

  /** @internal The task resumes with the decision: every case is withdrawn, the winner's value returned. */
  private finish(): IteratorResult<Instruction, unknown> {
    this.withdrawAll();
    const outcome = this.outcome;
    this.outcome = undefined;
    if (this.failed) throw outcome;
    FINISHED.value = this.lone ? outcome : { index: this.winner, value: outcome };
    return FINISHED;
  }

  /** @internal */
  private withdrawAll(): void {
    const registrations = this.registrations;
    if (registrations === null) return;
    this.registrations = null;
    for (let i = 0; i < registrations.length; i++) this.cases[i]!.withdraw(registrations[i]);
  }
}

function checkCases(cases: unknown): void {
  if (!Array.isArray(cases)) throw new TypeError(`select() expects an array of cases, got ${describe(cases)}`);
  if (cases.length === 0) throw new RangeError("select() needs at least one case: with none, nothing can happen");
  for (let i = 0; i < cases.length; i++) {
    if (!(cases[i] instanceof SelectCase)) {
      throw new TypeError(
        `select() expects cases (ch.recv(), ch.send(v), B.timeout(ms), B.once(emitter, event)…), got ${describe(cases[i])} at index ${i}; ` +
          "to wait on any operation, race it: B.race([...])",
      );
    }
  }
}

/**
 * The value of a select case.
 *
 * @example
 * ```ts
 * type V = B.CaseValue<L.SelectCase<number>>;   // number
 * ```
 */
export type CaseValue<C> = C extends SelectCase<infer T> ? T : never;

/**
 * What `select` evaluates to: the index of the case that happened and its
 * value, a union over the positions (so a test of `index` narrows `value`).
 *
 * @example
 * ```ts
 * type S = B.Selected<[L.SelectCase<number>, L.SelectCase<void>]>;
 * // { index: 0; value: number } | { index: 1; value: void }
 * ```
 */
export type Selected<Cs extends readonly SelectCase<unknown>[]> = {
  [I in keyof Cs]: { readonly index: I extends `${infer N extends number}` ? N : number; readonly value: CaseValue<Cs[I]> };
}[number];

class Select<T> implements Operation<T> {
  constructor(private readonly cases: readonly SelectCase<unknown>[]) {}

  [Symbol.iterator](): Iterator<Instruction, T, unknown> {
    return new Choice(this.cases, false) as unknown as Iterator<Instruction, T, unknown>;
  }
}

// A choice and a select whose maps outlive the selects programs make (see kernel/shapes.ts).
keepShapes(new Choice([], true), new Select([]));

/**
 * Waits until one of `cases` happens, and evaluates to `{ index, value }`:
 * which case, and its value. Exactly one case happens; the others have no
 * effect (a send that lost delivered nothing, a receive that lost took
 * nothing). When several can happen at once, the first in the list wins, so
 * order states priority (put `B.timeout(0)` last for a select that does not
 * wait). Cancellation-safe: a task cancelled while waiting withdraws every
 * case; one woken with a case's value keeps it (`Cancelled` arrives at its
 * next suspension point).
 *
 * @example
 * ```ts
 * const r = yield* B.select([jobs.recv(), results.send(last), B.timeout(1000)]);
 * if (r.index === 0 && r.value !== END) handle(r.value);   // END: `@bobbin/sync`'s end of a channel
 * else if (r.index === 2) console.log("idle for a second");
 * ```
 * @throws the error of the case that happened with one (a send on a closed channel).
 * @throws RangeError when `cases` is empty.
 * @throws TypeError when `cases` is not an array of select cases; outside a task.
 * @throws Cancelled when the task is cancelled while waiting.
 */
export function select<const Cs extends readonly SelectCase<unknown>[]>(cases: Cs): Operation<Selected<Cs>> {
  return new Select<Selected<Cs>>(cases);
}
