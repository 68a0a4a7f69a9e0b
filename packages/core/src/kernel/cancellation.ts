/**
 * Cancellation: requesting it, delivering it, and watching tasks that
 * swallow it.
 *
 * A request marks the task and runs its `protect` `onCancellation` handlers
 * at once. The `Cancelled` error is then thrown into the fiber where it is
 * parked (with `iterator.throw`, never `return`, so `finally` blocks may still
 * suspend). A task queued with an operation's result keeps that result: the
 * cancellation is delivered at its next suspension point instead (a task
 * queued by `yield` has nothing to lose: see state.ts's `cancelsAtStep`). The
 * task's children are cancelled when its body has ended (see ending.ts).
 */
import { Cancelled } from "../errors.js";
import { detach, runCancellationHandlers, trace } from "./guards.js";
import type { Host } from "./host.js";
import { Kind } from "./recorder.js";
import { keepShapes } from "./shapes.js";
import {
  cancelsAtStep,
  isParked,
  toCancelDelivered,
  toCancelDeliveredAtStep,
  toCancelRequested,
  toWarned,
  watchesCancel,
} from "./state.js";
import type { Task } from "./task.js";
import { coldOf, familyOf } from "./tree.js";

/** A cancelled task that keeps running this long gets one warning. */
const SWALLOWED_CANCEL_WARNING_MS = 2000;

/**
 * The watchdog's clock: real time, taken before anything can replace
 * `performance.now` (a simulation gives programs a clock of its own, and the
 * last steps of a simulated run may come after its world stopped, when that
 * clock reads real time again: mixing the two made every late step a 2 s swallow).
 */
const realNow = performance.now.bind(performance);

/** @internal Asks `task` to stop (no-op when it ended or was asked already). */
export function requestCancel(k: Host, task: Task): void {
  if (!toCancelRequested(task)) return;
  const r = k.recorder;
  if (r !== null) {
    r.codes[r.next] = task.uid * Kind.Kinds + Kind.Cancel;
    if (++r.next === r.capacity) r.wrapped();
  }
  if (k.tracer !== null) trace(k, "cancel", task);
  const cold = coldOf(task);
  if (cold !== null) {
    cold.cancelledAt = realNow();
    runCancellationHandlers(k, task, cold);
    cold.abort?.abort(cancelledError(task));
  }
  if (isParked(task)) deliverCancel(k, task);
}

/** @internal Throws `Cancelled` into a parked task, ahead of ordinary steps. */
export function deliverCancel(k: Host, task: Task): void {
  const waiter = toCancelDelivered(task, cancelledError(task));
  detach(k, task, waiter);
  k.queueUrgent(task);
}

/**
 * @internal Before a step of a task whose cancellation was requested: a task
 * queued by `yield` is cancelled now; one queued with a result runs with it.
 * Returns the flags the step runs with.
 */
export function beforeCancelledStep(task: Task, flags: number): number {
  if (cancelsAtStep(flags)) flags = toCancelDeliveredAtStep(task, flags, cancelledError(task));
  if (watchesCancel(flags)) flags = watchSwallowedCancel(task, flags);
  return flags;
}

/** @internal The `Cancelled` a task is cancelled with. */
export function cancelledError(task: Task): Cancelled {
  const message = `${task} was cancelled`;
  // Its stack would only show the kernel's loop, and capturing one costs more
  // than the rest of a cancellation: the message names the task instead. A
  // limit that is not a number captures nothing (one of 0 still walks the
  // stack: half the cost of the error); the stack is then what 0 frames give.
  const limit = Error.stackTraceLimit;
  (Error as { stackTraceLimit: unknown }).stackTraceLimit = undefined;
  try {
    const error = new Cancelled(message);
    error.stack = `Cancelled: ${message}`;
    return error;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Warns once about a cancelled task that keeps running long after it was
 * cancelled; the time it waited for children of its own to end does not
 * count (`waitsForChildren`). A task with no cold state is timed from its
 * first step after the one that delivered its `Cancelled` (it caught it, or
 * cleans up): the cancelled tasks that end at once make no record for it.
 * One timed from +∞ (`waitsAfterCancel`) is never warned of.
 */
function watchSwallowedCancel(task: Task, flags: number): number {
  const cold = familyOf(task);
  if (cold.joinedAt !== 0) {
    cold.cancelledAt += realNow() - cold.joinedAt;
    cold.joinedAt = 0;
  }
  if (cold.cancelledAt === 0) cold.cancelledAt = realNow();
  else if (realNow() - cold.cancelledAt > SWALLOWED_CANCEL_WARNING_MS) {
    process.emitWarning(
      `${task} keeps running ${SWALLOWED_CANCEL_WARNING_MS} ms after it was cancelled: ` +
        "a task that catches Cancelled must clean up and end, or it delays its parent's cancel",
      { code: "BOBBIN_SWALLOWED_CANCEL" },
    );
    return toWarned(flags);
  }
  return flags;
}

/**
 * @internal The cancelled `task` parks until children of its own end (a
 * group's owner stopping its children, a server awaiting its requests'
 * drain): the time they take is theirs — each is watched itself — not the
 * task's, whose watch does not count it.
 */
export function waitsForChildren(task: Task): void {
  const cold = coldOf(task);
  if (cold !== null && cold.cancelledAt !== 0) cold.joinedAt = realNow();
}

/**
 * @internal `task` waits on purpose after its cancellation, for as long as
 * something else bounds and reports: the proxy of a call, which waits for
 * the other domain to end the parallel task (that domain watches its own
 * tasks; one that does not hear the cancellation within the grace is
 * terminated, and `DomainUnresponsive` says why). Its late steps are no
 * swallowed cancellation.
 */
export function waitsAfterCancel(task: Task): void {
  familyOf(task).cancelledAt = Number.POSITIVE_INFINITY;
}

// A Cancelled whose map outlives the cancellations of a run (see shapes.ts).
keepShapes(new Cancelled(""));
