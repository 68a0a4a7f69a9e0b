/** Waiting outside a task: for Node's loop to turn, for a condition. */

/**
 * A Promise settled after `ms` milliseconds (Node's loop turns meanwhile).
 * @example
 * ```ts
 * await delay(5);
 * ```
 */
export function delay(ms = 5): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Waits until `condition()` holds, asking every 2 ms; fails after `ms`,
 * saying what was awaited.
 * @example
 * ```ts
 * await until(() => openFds() === before, { what: "the sockets to close" });
 * ```
 */
export async function until(
  condition: () => boolean,
  { ms = 2000, what = "the condition" }: { ms?: number; what?: string } = {},
): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}, in vain`);
    await delay(2);
  }
}
