/**
 * What a task reads from a stream of values (a channel, an event stream): a
 * value, or the end of the stream.
 *
 * @example
 * ```ts
 * const r: B.Received<string> = yield* lines.next();
 * if (!r.done) console.log(r.value);
 * ```
 */
export type Received<T> = { readonly done: false; readonly value: T } | { readonly done: true };

/** @internal The end of a stream (one frozen object). */
export const ENDED: Received<never> = Object.freeze({ done: true });

/** @internal A value read from a stream. */
export function received<T>(value: T): Received<T> {
  return { done: false, value };
}
