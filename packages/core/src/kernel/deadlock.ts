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
  }
}

/** @internal A run started: watch it. */
export function watchForDeadlock(kernel: Kernel): void {
  if (waiting.size === 0) process.on("beforeExit", onBeforeExit);
  waiting.add(kernel);
}

/** @internal The runs of this thread in progress (for dumps taken outside a task). */
export function runningKernels(): Kernel[] {
  return [...waiting];
}

/** @internal A run settled. */
export function unwatchForDeadlock(kernel: Kernel): void {
  stopWatching(kernel);
  if (waiting.delete(kernel) && waiting.size === 0) process.off("beforeExit", onBeforeExit);
}
