/**
 * The two registers of a thread: the task whose fiber is running, and the
 * kernel running it. Operations read them to know who they serve.
 */
import type { Kernel } from "./kernel.js";
import type { Task } from "./task.js";

/** @internal The task whose fiber is running on this thread, if any. */
export let current: Task | null = null;
/** @internal The kernel whose loop is running on this thread, if any. */
export let currentKernel: Kernel | null = null;

/** @internal */
export function setCurrent(task: Task | null): void {
  current = task;
}

/**
 * @internal Enters a kernel's loop (a slice begins: the kernel refreshes what
 * is checked once per slice); returns the kernel that was running (loops of
 * two runs may nest).
 */
export function enterKernel(kernel: Kernel | null): Kernel | null {
  const outer = currentKernel;
  currentKernel = kernel;
  kernel?.sliceBegins();
  return outer;
}

/**
 * @internal The running task. Operations call it; outside a task it explains
 * where they must be used.
 * @throws TypeError outside a task.
 */
export function currentTask(operation: string): Task {
  if (current === null) {
    throw new TypeError(`${operation} must be called from inside a task: start one with B.run(function* () { … })`);
  }
  return current;
}

/** @internal The kernel of the running task (call after `currentTask`). */
export function kernelOf(operation: string): Kernel {
  if (currentKernel === null) currentTask(operation);
  return currentKernel!;
}
