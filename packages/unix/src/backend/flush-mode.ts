/**
 * How a ready batch reaches a blocked `select`: `"immediate"` batches a whole
 * phase of Node's loop (one `setImmediate` per batch), `"microtask"` hands
 * each callback's readiness over at once.
 *
 * @example
 * ```ts
 * class MyBackend extends NodeLoop { constructor() { super("microtask"); } }
 * ```
 */
export type FlushMode = "immediate" | "microtask";
