/**
 * How a task stands, and every change of it: the one owner of `Task.flags`
 * and of what `Task.value` holds in each phase (see task.ts).
 *
 * A task's life, one transition per arrow:
 *
 * ```text
 * spawned ─toQueued──► ready ─toRunning──► running
 * running ─toYielded─► ready                                  it yielded
 * running ─toFailedStep► ready                                it broke the protocol: it throws
 * ready ───toCancelDeliveredAtStep► ready                     yielded, it is cancelled now
 * running ─toParked──► parked ─toWoken, toInterrupted,
 *                              toCancelDelivered──► ready
 * running ─toEnding──► ending ─toEnded──► ended               children are left to end
 * running ─toEnded───► ended                                  no child is left
 * ready ───toEnded───► ended                                  cancelled before its first step
 * ```
 *
 * Beside the phase a task carries marks: its cancellation was requested
 * (`toCancelRequested`) and delivered, its parent joined it (`toJoined`,
 * `toUnjoined`: parked until it ends) and consumed it (`toConsumed`: it
 * leaves the tree once ended), and `L.unpark` left it a permit
 * (`toPermitted`, `toPermitTaken`). An ended task's outcome may still become
 * `Cancelled` once (`toCancelledAfterEnd`): its parent gave it up.
 *
 * Every transition checks its precondition in development builds (see
 * assert.ts) and costs its stores alone in published ones. The bits (`F`,
 * `State`: the record's layout, in task.ts) are private to the kernel (this
 * folder); the rest of core reads a task through the queries at the end of
 * this file.
 */
import { RESUMED } from "../operation.js";
import { broken } from "./assert.js";
import { F, State, type Task, type Waiter } from "./task.js";

/** The phase bits: none of them set is a running task (or a spawned one, before `toQueued`). */
const PHASE = F.QUEUED | F.PARKED | F.ENDING | F.STATE;

/** @internal How a task spawns: with its body's arguments in `value` (no, one or several), and whether it may be cancelled unborn. */
export function flagsAtSpawn(argc: number, runsToFirstSuspension: boolean): number {
  const args = argc === 0 ? 0 : argc === 1 ? F.ONE_ARG : F.ARGS;
  return runsToFirstSuspension ? args | F.NO_EARLY_CANCEL : args;
}

// -- the phases ------------------------------------------------------------------

/** @internal spawned, woken or yielded → ready: the caller puts it in a ready queue. */
export function toQueued(task: Task): void {
  if (__BOBBIN_DEV__ && (task.flags & PHASE) !== 0) broken(task, "is queued while queued, parked, ending or ended");
  task.flags |= F.QUEUED;
}

/**
 * @internal ready → running: the loop took it from the ready queue. `flags`
 * are its flags as the step settled them (`THROW`: the step throws).
 */
export function toRunning(task: Task, flags: number): void {
  if (__BOBBIN_DEV__ && (flags & PHASE) !== F.QUEUED) broken(task, "runs while not ready");
  task.flags = flags & ~(F.QUEUED | F.YIELDED | F.THROW);
}

/**
 * @internal Its first step (still ready): its body's generator is made, its
 * arguments dropped; returns its flags. `gen` is the generator.
 */
export function toStarted(task: Task, gen: Task["gen"]): number {
  if (__BOBBIN_DEV__ && (task.flags & (F.STARTED | PHASE)) !== F.QUEUED) broken(task, "starts twice, or while not ready");
  task.gen = gen;
  task.value = RESUMED;
  const flags = (task.flags | F.STARTED) & ~(F.ONE_ARG | F.ARGS);
  task.flags = flags;
  return flags;
}

/** @internal running → ready: it yielded (`yield* B.yieldNow()`). */
export function toYielded(task: Task): void {
  if (__BOBBIN_DEV__ && (task.flags & PHASE) !== 0) broken(task, "yields while not running");
  task.flags |= F.YIELDED | F.QUEUED;
  task.value = RESUMED;
}

/** @internal running → parked on `waiter`. */
export function toParked(task: Task, waiter: Waiter): void {
  if (__BOBBIN_DEV__ && (task.flags & (PHASE | F.STARTED)) !== F.STARTED) broken(task, "parks while not running");
  task.flags |= F.PARKED;
  task.value = waiter;
}

/**
 * @internal parked → ready: its operation resumes with `value` (never
 * `undefined`: use `RESUMED`), or throws it (`error`). The caller queues it.
 */
export function toWoken(task: Task, value: unknown, error: boolean): void {
  const flags = task.flags;
  if (__BOBBIN_DEV__ && (flags & PHASE) !== F.PARKED) broken(task, "is woken while not parked");
  task.flags = (flags & ~(F.PARKED | F.YIELDED | F.THROW)) | (error ? F.THROW | F.QUEUED : F.QUEUED);
  task.value = value;
}

/**
 * @internal running → ready with `error` to throw: its step ended neither
 * parked nor yielded (it broke the protocol). The caller queues it.
 */
export function toFailedStep(task: Task, error: unknown): void {
  if (__BOBBIN_DEV__ && (task.flags & PHASE) !== 0) broken(task, "fails a step while not running");
  task.flags = (task.flags & ~F.YIELDED) | F.THROW | F.QUEUED;
  task.value = error;
}

/** @internal running → ending: its body failed or was cancelled, and children are left to end. */
export function toEnding(task: Task, state: State, value: unknown, liveChildren: number): void {
  if (__BOBBIN_DEV__ && ((task.flags & PHASE) !== 0 || liveChildren === 0))
    broken(task, "starts ending while not running, or with no child");
  task.flags = (task.flags & ~F.ENDING_STATE) | F.ENDING | (state << F.ENDING_SHIFT);
  task.value = value;
}

/** @internal The state an ending task ends in, and the outcome it waits with. */
export function endingState(task: Task): State {
  return (task.flags & F.ENDING_STATE) >> F.ENDING_SHIFT;
}

/**
 * @internal running, ending, or queued unborn (cancelled before its first
 * step) → ended with `state` and `value`: it and its whole subtree are over.
 */
export function toEnded(task: Task, state: State, value: unknown, liveChildren: number): void {
  const flags = task.flags;
  if (__BOBBIN_DEV__) {
    if ((flags & (F.PARKED | F.STATE)) !== 0 || (flags & (F.QUEUED | F.STARTED)) === (F.QUEUED | F.STARTED)) {
      broken(task, "ends while parked, ready or ended");
    }
    if (liveChildren !== 0) broken(task, "ends with children");
    if (state === State.Pending) broken(task, "ends pending");
  }
  task.flags = (flags & ~(F.ENDING | F.ENDING_STATE | F.QUEUED | F.ONE_ARG | F.ARGS)) | state;
  task.value = value;
}

/**
 * @internal ended → ended `Cancelled` (with `error`): its parent cancelled
 * it after it ended, giving up its outcome (as Miou does).
 */
export function toCancelledAfterEnd(task: Task, error: unknown): void {
  const state: State = task.flags & F.STATE;
  if (__BOBBIN_DEV__ && (state === State.Pending || state === State.Cancelled))
    broken(task, "is cancelled as ended while pending, or twice");
  task.flags = (task.flags & ~F.STATE) | State.Cancelled;
  task.value = error;
}

// -- cancellation -------------------------------------------------------------------

/** @internal Marks its cancellation as requested; false when it ended or was asked already. */
export function toCancelRequested(task: Task): boolean {
  const flags = task.flags;
  if ((flags & (F.STATE | F.CANCEL_REQUESTED)) !== 0) return false;
  task.flags = flags | F.CANCEL_REQUESTED;
  return true;
}

/**
 * @internal parked → ready, `error` (its `Cancelled`) to throw where it
 * waits; returns what it waited on. The caller queues it ahead of ordinary steps.
 */
export function toCancelDelivered(task: Task, error: unknown): Waiter {
  const flags = task.flags;
  if (__BOBBIN_DEV__ && ((flags & PHASE) !== F.PARKED || (flags & (F.CANCEL_REQUESTED | F.CANCEL_DELIVERED)) !== F.CANCEL_REQUESTED)) {
    broken(task, "is delivered a cancellation while not parked, not cancelled, or twice");
  }
  const waiter = task.value as Waiter;
  task.flags = (flags & ~(F.PARKED | F.YIELDED)) | F.CANCEL_DELIVERED | F.THROW | F.QUEUED;
  task.value = error;
  return waiter;
}

/**
 * @internal Whether a step of a task whose cancellation was requested
 * delivers it now: the task was queued by `yield`, so nothing is lost; one
 * queued with a result runs with it, and is cancelled at its next suspension.
 */
export function cancelsAtStep(flags: number): boolean {
  return (flags & (F.CANCEL_DELIVERED | F.YIELDED)) === F.YIELDED;
}

/** @internal ready (yielded) → ready, `error` (its `Cancelled`) to throw at this step; returns its flags. */
export function toCancelDeliveredAtStep(task: Task, flags: number, error: unknown): number {
  if (__BOBBIN_DEV__ && ((flags & PHASE) !== F.QUEUED || !cancelsAtStep(flags)))
    broken(task, "is delivered a cancellation at a step that keeps a result");
  task.value = error;
  return flags | F.THROW | F.CANCEL_DELIVERED;
}

/**
 * @internal parked → ready, `error` to throw where it waits, without
 * cancelling it (`L.interrupt`); returns what it waited on, or null when it
 * is not parked (nothing changes). The caller queues it.
 */
export function toInterrupted(task: Task, error: unknown): Waiter | null {
  const flags = task.flags;
  if ((flags & PHASE) !== F.PARKED) return null;
  const waiter = task.value as Waiter;
  task.flags = (flags & ~(F.PARKED | F.YIELDED)) | F.THROW | F.QUEUED;
  task.value = error;
  return waiter;
}

/**
 * @internal Whether a step is watched for a swallowed cancellation (see
 * cancellation.ts): one that resumes the task normally once its `Cancelled`
 * was delivered, until it was warned of. The step that throws `Cancelled` in
 * is not: a task that lets it through ends there, and so needs no clock.
 */
export function watchesCancel(flags: number): boolean {
  return (flags & (F.CANCEL_DELIVERED | F.WARNED | F.THROW)) === F.CANCEL_DELIVERED;
}

/** @internal It was warned of once for swallowing its cancellation; returns its flags. */
export function toWarned(flags: number): number {
  return flags | F.WARNED;
}

// -- the permit of L.park / L.unpark (park.ts) ------------------------------------------

/** @internal `L.unpark` found it not parked by `L.park`: its next `L.park` returns at once (an ended task gets none). */
export function toPermitted(task: Task): void {
  if ((task.flags & F.STATE) === State.Pending) task.flags |= F.PERMIT;
}

/** @internal The running task parks by `L.park` unless it has a permit, which it takes: returns whether it had one. */
export function toPermitTaken(task: Task): boolean {
  const flags = task.flags;
  if (__BOBBIN_DEV__ && (flags & (PHASE | F.STARTED)) !== F.STARTED) broken(task, "takes a permit while not running");
  if ((flags & F.PERMIT) === 0) return false;
  task.flags = flags & ~F.PERMIT;
  return true;
}

// -- marks of a child, set by its parent ---------------------------------------------

/** @internal The parent parks until `child` ends (its waiter's `childEnded` hears of it). */
export function toJoined(child: Task): void {
  if (__BOBBIN_DEV__ && (child.flags & (F.STATE | F.JOINED)) !== 0) broken(child, "is joined while ended, or twice");
  child.flags |= F.JOINED;
}

/** @internal The parent stops waiting for `child` (it may have ended meanwhile). */
export function toUnjoined(child: Task): void {
  child.flags &= ~F.JOINED;
}

/** @internal The parent heard `child` end: returns whether it was joined (its waiter is then told). */
export function toEndHeard(child: Task): boolean {
  const flags = child.flags;
  if ((flags & F.JOINED) === 0) return false;
  child.flags = flags & ~F.JOINED;
  return true;
}

/** @internal The parent took `child`'s outcome or gave it up; false when it had already. */
export function toConsumed(parent: Task, child: Task): boolean {
  const flags = child.flags;
  if (__BOBBIN_DEV__ && child.parent !== parent) broken(child, `is consumed by ${parent}, not its parent`);
  if ((flags & F.CONSUMED) !== 0) return false;
  child.flags = flags | F.CONSUMED;
  return true;
}

// -- queries (for all of core) ------------------------------------------------------------

/** @internal The task's state (kernel only: the rest of core asks the questions below). */
export function stateOf(task: Task): State {
  return task.flags & F.STATE;
}

/** @internal Whether it has not ended. */
export function isPending(task: Task): boolean {
  return (task.flags & F.STATE) === State.Pending;
}

/** @internal Whether it ended with a value. */
export function hasResolved(task: Task): boolean {
  return (task.flags & F.STATE) === State.Resolved;
}

/** @internal Whether it ended with an error (rather than returned or was cancelled). */
export function hasFailed(task: Task): boolean {
  return (task.flags & F.STATE) === State.Failed;
}

/** @internal Whether it ended cancelled (by its parent, or a failure above it). */
export function wasCancelled(task: Task): boolean {
  return (task.flags & F.STATE) === State.Cancelled;
}

/** @internal What an ended task returned (typed so, for a task known to have resolved), or the error it ended with. */
export function outcomeOf<T>(task: Task<T>): T {
  if (__BOBBIN_DEV__ && (task.flags & F.STATE) === State.Pending) broken(task, "has no outcome yet");
  return task.value as T;
}

/** @internal Whether its body has begun to run (its first step was taken). */
export function hasStarted(task: Task): boolean {
  return (task.flags & F.STARTED) !== 0;
}

/** @internal Whether its cancellation was requested (ended or not). */
export function isCancelRequested(task: Task): boolean {
  return (task.flags & F.CANCEL_REQUESTED) !== 0;
}

/** @internal Whether its parent took its outcome or gave it up (it leaves the tree once ended). */
export function isConsumed(task: Task): boolean {
  return (task.flags & F.CONSUMED) !== 0;
}

/** @internal Whether it is parked (on anything). */
export function isParked(task: Task): boolean {
  return (task.flags & F.PARKED) !== 0;
}

/** @internal What a parked task waits on, or null. */
export function waiterOf(task: Task): Waiter | null {
  return (task.flags & F.PARKED) !== 0 ? (task.value as Waiter) : null;
}

/** @internal Whether its body ended and it waits for its children to end. */
export function isEnding(task: Task): boolean {
  return (task.flags & F.ENDING) !== 0;
}
