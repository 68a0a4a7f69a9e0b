/**
 * The registers of a thread: the kernel whose loop is running on it, whose
 * `current` task is the one whose fiber runs. Operations read them to know
 * who they serve (through `currentTask` here, `kernelOf` in kernel.ts).
 *
 * A step writes the running task into its kernel rather than into this
 * object: storing a task (young, as tasks mostly are) into an object as old
 * as this module costs a write barrier's slow path at every step, and the
 * kernel is at most as old as its run.
 */
import type { Host } from "./host.js";
import type { Task } from "./task.js";

/** @internal This thread's registers (`kernel` is a `Kernel`: see kernel.ts's `runningKernel`). */
export const registers: { kernel: Host | null } = { kernel: null };

/**
 * @internal Enters a kernel's loop (a slice begins: the kernel refreshes what
 * is checked once per slice); returns the kernel that was running (loops of
 * two runs may nest).
 */
export function enterKernel(kernel: Host | null): Host | null {
  const outer = registers.kernel;
  registers.kernel = kernel;
  kernel?.sliceBegins();
  return outer;
}

/** @internal The task whose fiber is running on this thread, if any. */
export function runningTask(): Task | null {
  const kernel = registers.kernel;
  return kernel === null ? null : kernel.current;
}

/**
 * @internal The running task. Operations call it; outside a task it explains
 * where they must be used.
 * @throws TypeError outside a task.
 */
export function currentTask(operation: string): Task {
  const task = runningTask();
  if (task === null) {
    throw new TypeError(`${operation} must be called from inside a task: start one with B.run(function* () { … })`);
  }
  return task;
}
