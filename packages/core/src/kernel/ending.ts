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
import { CallbackFailed, Cancelled, type ChildOutcome, failureOf, StillHasChildren } from "../errors.js";
import { type Ending, exitHooks } from "../lifecycle.js";
import { invariant } from "./assert.js";
import { cancelledError, requestCancel } from "./cancellation.js";
import type { Kernel } from "./kernel.js";
import { F, State, type Task, type Waiter } from "./task.js";
import { childrenOf, coldOf, familyOf, forgetChild, liveChildren } from "./tree.js";

const ENDINGS: readonly Ending[] = ["resolved", "resolved", "failed", "cancelled"];

/** @internal The fiber of `task` returned (`normal`) or threw `value`. */
export function bodyEnded(k: Kernel, task: Task, normal: boolean, value: unknown): void {
  // The finished generator is dropped; its prototype keeps naming the task.
  task.gen = Object.getPrototypeOf(task.gen) as object as Task["gen"];
  let state = normal ? State.Resolved : State.Failed;
  // Whatever a cancelled body returns, it ends Cancelled, as when it lets a
  // `Cancelled` through; what it throws instead (its cleanup failed) is its outcome.
  if ((task.flags & F.CANCEL_REQUESTED) !== 0 && (normal || value instanceof Cancelled)) {
    if (normal) value = cancelledError(task);
    state = State.Cancelled;
  }
  if (state === State.Resolved) {
    if (liveChildren(task) === 0) {
      terminate(k, task, State.Resolved, value);
      return;
    }
    const error = new StillHasChildren(task, childrenOf(task).map(childOutcome));
    k.fail(error);
    state = State.Failed;
    value = error;
  }
  cancelChildren(k, task);
  if (liveChildren(task) === 0) {
    terminate(k, task, state, value);
    return;
  }
  task.flags = (task.flags & ~F.ENDING_STATE) | F.ENDING | (state << F.ENDING_SHIFT);
  task.value = value;
}

/** How a child stood when its parent returned (for `StillHasChildren`). */
function childOutcome(child: Task): ChildOutcome {
  const state: State = child.flags & F.STATE;
  const task = String(child);
  if (state === State.Pending || state === State.Resolved) return { task, uid: child.uid, status: child.status };
  return { task, uid: child.uid, status: child.status, error: child.value };
}

/** @internal A task cancelled before its first step ends without running its body. */
export function endUnborn(k: Kernel, task: Task): void {
  terminate(k, task, State.Cancelled, cancelledError(task));
}

/** A failing task cancels its children; those that had ended are consumed and forgotten. */
function cancelChildren(k: Kernel, task: Task): void {
  for (const child of childrenOf(task)) {
    if ((child.flags & F.STATE) !== State.Pending) k.consume(task, child);
    else {
      child.flags |= F.CONSUMED;
      requestCancel(k, child);
    }
  }
}

/**
 * @internal `task` and its whole subtree are over: publish the outcome, tell
 * the parent, and end the ancestors this was the last child of.
 */
export function terminate(k: Kernel, task: Task, state: State, value: unknown): void {
  for (;;) {
    if (__BOBBIN_DEV__) invariant(liveChildren(task) === 0 && (task.flags & F.PARKED) === 0, `${task} ends with children or parked`);
    if (exitHooks.length !== 0) {
      const errors = runExitHooks(k, task, state);
      if (errors !== null) {
        // A veto of a normal ending fails the run too (a broken rule: a leak); after a
        // failure or a cancellation, the hooks' errors (a finaliser's) join the outcome.
        if (state === State.Resolved) k.fail((value = failureOf(errors)));
        else value = failureOf(state === State.Failed ? [value, ...errors] : errors);
        state = State.Failed;
      }
    }
    task.flags = (task.flags & ~(F.STATE | F.ENDING | F.ENDING_STATE)) | state;
    task.value = value;
    k.liveTasks--;
    if (k.tracer !== null) k.trace("end", task);
    const parent = task.parent;
    if (parent === null) {
      k.topEnded(task);
      return;
    }
    if ((task.flags & F.CONSUMED) !== 0) forgetChild(parent, task);
    coldOf(task)?.orphans?.ended(task);
    const parentFlags = parent.flags;
    if ((parentFlags & F.ENDING) !== 0) {
      if (state === State.Failed) (familyOf(parent).failedChildren ??= []).push(task);
      if (liveChildren(parent) !== 0) return;
      task = parent;
      state = (parentFlags & F.ENDING_STATE) >> F.ENDING_SHIFT;
      value = parent.value;
      const cold = coldOf(parent);
      if (cold !== null && cold.failedChildren !== null) {
        value = withChildFailures(task, state, value, cold.failedChildren);
        state = State.Failed;
        cold.failedChildren = null;
      }
      continue;
    }
    if ((task.flags & F.JOINED) !== 0) {
      task.flags &= ~F.JOINED;
      (parent.value as Waiter).childEnded!(k, parent, task);
    }
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
  const errors = failed.map((child) => child.value);
  return failureOf(state === State.Failed ? [value, ...errors] : errors);
}

/** Runs the exit hooks; returns the errors they returned (or threw, as `CallbackFailed`), or null. */
function runExitHooks(k: Kernel, task: Task, state: State): unknown[] | null {
  let errors: unknown[] | null = null;
  const ending = ENDINGS[state]!;
  for (let i = 0; i < exitHooks.length; i++) {
    const hook = exitHooks[i]!;
    let answer: unknown;
    try {
      answer = hook(task, ending);
    } catch (error) {
      answer = new CallbackFailed(`the exit hook ${hook.name || "(anonymous)"} at the end of ${task}`, error);
      k.fail(answer);
    }
    if (answer !== undefined) (errors ??= []).push(answer);
  }
  return errors;
}
