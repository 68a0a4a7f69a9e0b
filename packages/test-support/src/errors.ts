/** The error of what must fail: a run's result, a call, an operation in a task. */

/** A run's outcome as `@bobbin/core` gives it (`B.Result`). */
export type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * The error of a failed result; a success fails the test, naming its value.
 * @example
 * ```ts
 * expect(errorOf(await B.runResult(main))).toBeInstanceOf(Timeout);
 * ```
 */
export function errorOf<E = NodeJS.ErrnoException>(result: Outcome): E {
  if (result.ok) throw new Error(`expected a failure, got ${String(result.value)}`);
  return result.error as E;
}

/**
 * What `fn` throws. When it returns an operation (an iterable) instead, its
 * first step runs, and what that throws is the answer: a misused primitive
 * may check its arguments at the call or when the operation starts.
 * @example
 * ```ts
 * expect(thrownBy(() => new Mutex().unlock()).message).toMatch(/not locked/);
 * ```
 */
export function thrownBy<E = Error>(fn: () => unknown): E {
  try {
    const made = fn();
    if (made !== null && typeof made === "object" && Symbol.iterator in made) (made as Iterable<unknown>)[Symbol.iterator]().next();
  } catch (error) {
    return error as E;
  }
  throw new Error("expected an error, and nothing was thrown");
}

/**
 * In a task: runs the operation `op` makes, which must fail, and returns what
 * it threw (a success fails the test).
 * @example
 * ```ts
 * const e = yield* failure(() => connect(sock, { host: "127.0.0.1", port: 1 }));
 * expect(e.code).toBe("ECONNREFUSED");
 * ```
 */
export function* failure<I, E = NodeJS.ErrnoException>(
  op: () => { [Symbol.iterator](): Iterator<I, unknown, unknown> },
): Generator<I, E, unknown> {
  try {
    yield* op();
  } catch (error) {
    return error as E;
  }
  throw new Error("expected the operation to fail, and it succeeded");
}
