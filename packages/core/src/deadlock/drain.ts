/**
 * Deadlock detection when Node's loop drains: while runs still wait, nothing
 * can wake their tasks any more (a syscall backend, a timer or a promise
 * with real work behind it would hold a handle), so each such run fails with
 * `Deadlock` instead of leaving its promise unsettled forever. The error
 * names a cycle of waits if there is one, and holds the task tree (see
 * report.ts, which also looks for cycles while Node's loop is kept alive by
 * other handles). Every kernel of a thread is watched from its start until
 * its run settles (run.ts's `startKernel`).
 */
import { runs } from "../diagnostics/runs.js";
import type { Kernel } from "../kernel/kernel.js";
import { deadlockError, stopWatching } from "./report.js";

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
  for (const kernel of runs) {
    if (kernel.life.done) continue;
    const error = failed.get(kernel);
    if (error !== undefined) {
      kernel.life.abandon(error); // cancelling its tasks did not end them: nothing else will
      continue;
    }
    const deadlock = deadlockError(kernel);
    failed.set(kernel, deadlock);
    kernel.life.fail(deadlock);
    turnAgain(); // if cancelling does not end its tasks, the next drain abandons the run
  }
}

/** @internal A run started: watch it, from the next turn of Node's loop on (see `turnAgain`). */
export function watchForDeadlock(kernel: Kernel): void {
  if (runs.size === 0) process.on("beforeExit", onBeforeExit);
  runs.add(kernel);
  turnAgain();
}

/** @internal A run settled. */
export function unwatchForDeadlock(kernel: Kernel): void {
  stopWatching(kernel);
  if (!runs.delete(kernel) || runs.size !== 0) return;
  process.off("beforeExit", onBeforeExit);
  // Nothing is watched any more: the process may exit at once.
  if (turn !== null) clearImmediate(turn);
  turn = null;
}
