/** Whether a child process is gone for good. */

/**
 * Whether process `pid` is gone: `kill(pid, 0)` finds no such process
 * (`ESRCH`), so it has ended and been reaped (a zombie is still found).
 * @example
 * ```ts
 * await until(() => processGone(child.pid));
 * ```
 */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}
