/**
 * The two registers of a thread: the task whose fiber is running, and the
 * kernel running it. Operations read them to know who they serve.
 *
 * They are properties of one object rather than module bindings: a step
 * writes `task` twice, and a store to an exported `let` costs several times
 * a property store (measured on V8 11: ~5 ns a step, a tenth of a switch).
 */
import type { Kernel } from "./kernel.js";
import type { Task } from "./task.js";

/** @internal This thread's registers. */
export const registers: { task: Task | null; kernel: Kernel | null } = { task: null, kernel: null };

/**
 * @internal Enters a kernel's loop (a slice begins: the kernel refreshes what
 * is checked once per slice); returns the kernel that was running (loops of
 * two runs may nest).
 */
export function enterKernel(kernel: Kernel | null): Kernel | null {
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

/** @internal The kernel of the running task (call after `currentTask`). */
export function kernelOf(operation: string): Kernel {
  const kernel = registers.kernel;
  if (kernel === null) currentTask(operation);
  return kernel!;
}
