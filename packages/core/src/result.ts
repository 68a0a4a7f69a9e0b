/**
 * The outcome of a task, as returned by {@link awaitTask}: Miou's
 * `('a, exn) result`.
 *
 * @example
 * ```ts
 * const r: B.Result<number> = yield* B.awaitTask(t);
 * if (r.ok) console.log(r.value); else console.error(r.error);
 * ```
 */
export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/** @internal */
export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

/** @internal */
export function failed<T>(error: unknown): Result<T> {
  return { ok: false, error };
}
