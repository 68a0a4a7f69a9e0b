/**
 * What a receive from a channel evaluates to when it has no value to give:
 * the end of the stream, or (for a receive that does not wait) nothing yet.
 * Two symbols, compared with `===`: a receive evaluates to the value itself,
 * so receiving allocates nothing.
 */

/**
 * What `ch.recv()` and `ch.tryRecv()` evaluate to once the channel is closed
 * and every value in it was received. A channel cannot carry it as a value.
 *
 * @example
 * ```ts
 * for (let v = yield* jobs.recv(); v !== END; v = yield* jobs.recv()) yield* handle(v);
 * ```
 */
export const END: unique symbol = Symbol.for("@bobbin/sync.END");

/**
 * What `ch.tryRecv()` returns when a receive would wait: nothing is buffered
 * and no sender waits. A channel cannot carry it as a value.
 *
 * @example
 * ```ts
 * for (let v = ch.tryRecv(); v !== EMPTY && v !== END; v = ch.tryRecv()) batch.push(v);
 * ```
 */
export const EMPTY: unique symbol = Symbol.for("@bobbin/sync.EMPTY");
