/** The methods of the backend contract, by name (what `run` checks a backend has). */

/**
 * The names of the methods a backend must have (checked by `run`).
 *
 * @example
 * ```ts
 * const missing = BACKEND_METHODS.filter((m) => typeof (backend as any)[m] !== "function");
 * ```
 */
export const BACKEND_METHODS = [
  "select",
  "interrupt",
  "socket",
  "bindAndListen",
  "accept",
  "connect",
  "read",
  "write",
  "recvfrom",
  "sendto",
  "shutdown",
  "close",
  "closeNow",
  "localAddress",
  "now",
  "sleep",
  "deadline",
  "drain",
] as const;
