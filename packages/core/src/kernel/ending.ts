/**
 * How tasks end. A body that returns normally ends its task at once if it has
 * no child left (Miou's first rule; otherwise `StillHasChildren`). A body
 * that fails, or is cancelled, cancels its remaining children and the task
 * waits for them (`ENDING`); the last one to end ends it. Ending climbs the
 * tree in a loop, never by recursion, so a chain of any depth ends in
 * constant stack.
 *
 * No error is lost on the way: a task that throws anything but a `Cancelled`
 * fails with it, cancelled or not, and a child that fails while its ending
 * parent waits for it (its cleanup threw) adds its error to the parent's
 * outcome. Only an outcome a task already had when it was cancelled is
 * replaced by `Cancelled` (see `Kernel.cancelChild`), as in Miou.
 */
import { Cancelled, type ChildOutcome, failureOf, StillHasChildren } from "../errors.js";
import { cancelledError, requestCancel } from "./cancellation.js";
import { runExitHooks, trace } from "./guards.js";
import type { Host } from "./host.js";
import { Kind } from "./recorder.js";
import {
  endingState,
  hasStarted,
  isCancelRequested,
  isConsumed,
  isEnding,
  isPending,
  outcomeOf,
  stateOf,
  toConsumed,
  toEnded,
  toEndHeard,
  toEnding,
  waiterOf,
} from "./state.js";
import { F, nameSource, State, type Task } from "./task.js";
import { childrenOf, coldOf, consumeChild, familyOf, forgetChild, liveChildren } from "./tree.js";

/** @internal The fiber of `task` returned (`normal`) or threw `value`. */
export function bodyEnded(k: Host, task: Task, normal: boolean, value: unknown): void {
  // The finished generator is dropped; its prototype keeps naming the task.
  task.gen = Object.getPrototypeOf(task.gen) as object as Task["gen"];
  let state = normal ? State.Resolved : State.Failed;
  // Whatever a cancelled body returns, it ends Cancelled, as when it lets a
  // `Cancelled` through; what it throws instead (its cleanup failed) is its outcome.
  if (isCancelRequested(task) && (normal || value instanceof Cancelled)) {
    if (normal) value = cancelledError(task);
    state = State.Cancelled;
  }
  if (state === State.Resolved) {
    if (liveChildren(task) === 0) {
      terminate(k, task, State.Resolved, value);
      return;
    }
    const error = new StillHasChildren(task, childrenOf(task).map(childOutcome));
    k.life.fail(error);
    state = State.Failed;
    value = error;
  }
  cancelChildren(k, task);
  if (liveChildren(task) === 0) {
    terminate(k, task, state, value);
    return;
  }
  toEnding(task, state, value, liveChildren(task));
}

/** How a child stood when its parent returned (for `StillHasChildren`). */
function childOutcome(child: Task): ChildOutcome {
  const state = stateOf(child);
  const task = String(child);
  if (state === State.Pending) return { task, uid: child.uid, status: child.status, started: hasStarted(child) };
  if (state === State.Resolved) return { task, uid: child.uid, status: child.status };
  return { task, uid: child.uid, status: child.status, error: outcomeOf(child) };
}

/** @internal A task cancelled before its first step ends without running its body. */
export function endUnborn(k: Host, task: Task): void {
  terminate(k, task, State.Cancelled, cancelledError(task));
}

/** A failing task cancels its children; those that had ended are consumed and forgotten. */
function cancelChildren(k: Host, task: Task): void {
  for (const child of childrenOf(task)) {
    if (!isPending(child)) consumeChild(task, child);
    else {
      toConsumed(task, child);
      requestCancel(k, child);
    }
  }
}

/**
 * @internal `task` and its whole subtree are over: publish the outcome, tell
 * the parent, and end the ancestors this was the last child of.
 */
export function terminate(k: Host, task: Task, state: State, value: unknown): void {
  for (;;) {
    if (k.exitHooks.length !== 0) {
      const errors = runExitHooks(k, task, state);
      if (errors !== null) {
        // A veto of a normal ending fails the run too (a broken rule: a leak); after a
        // failure or a cancellation, the hooks' errors (a finaliser's) join the outcome.
        if (state === State.Resolved) k.life.fail((value = failureOf(errors)));
        else value = failureOf(state === State.Failed ? [value, ...errors] : errors);
        state = State.Failed;
      }
    }
    toEnded(task, state, value, liveChildren(task));
    k.taskEnded();
    const r = k.recorder;
    if (r !== null) {
      const flags = task.flags;
      if ((flags & F.STARTED) === 0) r.neverStarted(task.uid);
      const i = r.next;
      if (k.domains === null) r.codes[i] = task.uid * Kind.Kinds + Kind.EndHere + (flags & F.STATE);
      else {
        r.codes[i] = task.uid * Kind.Kinds + Kind.End;
        r.others[i] = (k.domainOf(task) + 1) * 4 + (flags & F.STATE);
      }
      r.refs[i] = nameSource(task);
      if (++r.next === r.capacity) r.wrapped();
    }
    if (k.tracer !== null) trace(k, "end", task);
    const parent = task.parent;
    if (parent === null) {
      k.life.topEnded(task);
      return;
    }
    if (isConsumed(task)) forgetChild(parent, task);
    const collectors = coldOf(parent)?.collectors;
    if (collectors != null) for (const collector of collectors) if (collector.ended(task)) break;
    if (isEnding(parent)) {
      if (state === State.Failed) (familyOf(parent).failedChildren ??= []).push(task);
      if (liveChildren(parent) !== 0) return;
      task = parent;
      state = endingState(parent);
      value = parent.value;
      const cold = coldOf(parent);
      if (cold !== null && cold.failedChildren !== null) {
        value = withChildFailures(task, state, value, cold.failedChildren);
        state = State.Failed;
        cold.failedChildren = null;
      }
      continue;
    }
    if (toEndHeard(task)) waiterOf(parent)!.childEnded!(parent, task);
    return;
  }
}

/**
 * The outcome of `task`, whose children `failed` while it waited for them to
 * end: their errors follow its own, or replace its `Cancelled`; the
 * `StillHasChildren` it failed with for returning while they ran names them.
 */
function withChildFailures(task: Task, state: State, value: unknown, failed: readonly Task[]): unknown {
  if (value instanceof StillHasChildren && value.task === task.uid && failed.every((child) => value.children.includes(child.uid))) {
    for (const child of failed) value.childFailed(child.uid, child.value);
    return value;
  }
  const errors = failed.map(outcomeOf);
  return failureOf(state === State.Failed ? [value, ...errors] : errors);
}
