/** What keeps Node's loop alive, and who listens to an emitter. */

/**
 * How many of Node's active resources are of `kind` (`"Timeout"`,
 * `"TCPServerWrap"`…), or, without a kind, how many there are.
 * @example
 * ```ts
 * expect(handleCount("Timeout")).toBe(0);
 * ```
 */
export function handleCount(kind?: string): number {
  const all = process.getActiveResourcesInfo();
  return kind === undefined ? all.length : all.filter((k) => k === kind).length;
}

/**
 * The listeners of each event of `emitter`, by event name (events without
 * listeners left out).
 * @example
 * ```ts
 * expect(listenerCounts(stream)).toEqual(before);
 * ```
 */
export function listenerCounts(emitter: NodeJS.EventEmitter): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of emitter.eventNames()) {
    const n = emitter.listenerCount(name);
    if (n !== 0) counts[String(name)] = n;
  }
  return counts;
}
