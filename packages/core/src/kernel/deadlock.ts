/**
 * Deadlock detection: when Node's loop is about to drain while runs still
 * wait, nothing can wake their tasks any more (a syscall backend, a timer or
 * a promise with real work behind it would hold a handle), so each such run
 * fails with `Deadlock` instead of leaving its promise unsettled forever.
 * The error names a cycle of waits if there is one, and holds the task tree
 * (see deadlock/report.ts, which also looks for cycles while Node's loop
 * is kept alive by other handles).
 */
import { deadlockError, stopWatching } from "../deadlock/report.js";
import type { Kernel } from "./kernel.js";

const waiting = new Set<Kernel>();

/** The runs failed with `Deadlock` here, and the error: if their loop drains again, they are abandoned. */
const failed = new WeakMap<Kernel, Error>();

/** The turn of Node's loop asked for by `turnAgain`, until it has run. */
let turn: NodeJS.Immediate | null = null;

/**
 * Makes Node's loop turn once more, so that its next drain is seen. Node
 * emits `beforeExit` when the loop drains, and then again only if the loop
 * came alive in between: what microtasks do after the event does not count.
 * A run settled by the detector, the code awaiting it, and the next run that
 * code starts all happen in microtasks; without this turn the loop stays
 * drained, no `beforeExit` comes, and Node exits with that next run unsettled
 * (code 0, or 13 under a top-level await), whatever it waits on.
 */
function turnAgain(): void {
  turn ??= setImmediate(() => {
    turn = null;
  });
}

function onBeforeExit(): void {
  for (const kernel of waiting) {
    if (kernel.done) continue;
    const error = failed.get(kernel);
    if (error !== undefined) {
      kernel.abandon(error); // cancelling its tasks did not end them: nothing else will
      continue;
    }
    const deadlock = deadlockError(kernel);
    failed.set(kernel, deadlock);
    kernel.fail(deadlock);
    turnAgain(); // if cancelling does not end its tasks, the next drain abandons the run
  }
}

/** @internal A run started: watch it, from the next turn of Node's loop on (see `turnAgain`). */
export function watchForDeadlock(kernel: Kernel): void {
  if (waiting.size === 0) process.on("beforeExit", onBeforeExit);
  waiting.add(kernel);
  turnAgain();
}

/** @internal The runs of this thread in progress (for dumps taken outside a task). */
export function runningKernels(): Kernel[] {
  return [...waiting];
}

/** @internal A run settled. */
export function unwatchForDeadlock(kernel: Kernel): void {
  stopWatching(kernel);
  if (!waiting.delete(kernel) || waiting.size !== 0) return;
  process.off("beforeExit", onBeforeExit);
  // Nothing is watched any more: the process may exit at once.
  if (turn !== null) clearImmediate(turn);
  turn = null;
}
