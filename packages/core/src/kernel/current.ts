/**
 * The two registers of a thread: the task whose fiber is running, and the
 * kernel running it. Operations read them to know who they serve (through
 * `currentTask` here, `kernelOf` in kernel.ts).
 *
 * They are properties of one object rather than module bindings: a step
 * writes `task` twice, and a store to an exported `let` costs several times
 * a property store.
 */
import type { Host } from "./host.js";
import type { Task } from "./task.js";

/** @internal This thread's registers (`kernel` is a `Kernel`: see kernel.ts's `runningKernel`). */
export const registers: { task: Task | null; kernel: Host | null } = { task: null, kernel: null };

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

/**
 * @internal The running task. Operations call it; outside a task it explains
 * where they must be used.
 * @throws TypeError outside a task.
 */
export function currentTask(operation: string): Task {
  const task = registers.task;
  if (task === null) {
    throw new TypeError(`${operation} must be called from inside a task: start one with B.run(function* () { … })`);
  }
  return task;
}
