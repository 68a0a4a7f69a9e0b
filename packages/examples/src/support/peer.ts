/**
 * Telling a client that went away from a server's own failure.
 */

/**
 * Whether `error` says the peer went away (reset the connection, or stopped reading).
 *
 * @example
 * ```ts
 * try { yield* echo(client); } catch (error) { if (!peerGone(error)) throw error; }
 * ```
 */
export function peerGone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ECONNRESET" || code === "EPIPE";
}
