/**
 * Refuses an options object that carries a key not among `names`, in the
 * message every package of Bobbin uses: the function, the unknown key, and
 * the options there are. An unknown key is a typo or an option of another
 * function, never something to ignore. Only own enumerable string keys
 * count (`Object.keys`); a caller checks that `options` is an object first,
 * in its own words.
 *
 * @param what the function as its caller wrote it, e.g. `"serve(options, handler)"`.
 * @param options the options object the function was given.
 * @param names every option the function takes.
 *
 * @example
 * ```ts
 * const NAMES = ["host", "port"];
 * L.checkOptionNames("listen(options)", { host: "::1", prot: 80 }, NAMES);
 * // TypeError: listen(options): unknown option "prot"; the options are host, port
 * ```
 * @throws TypeError for the first key of `options` that is not among `names`.
 */
export function checkOptionNames(what: string, options: object, names: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!names.includes(key)) throw unknownOption(what, key, names);
  }
}

/** @internal `checkOptionNames`' refusal of `key`, for a check that skips some keys not among `names`. */
export function unknownOption(what: string, key: string, names: readonly string[]): TypeError {
  return new TypeError(`${what}: unknown option "${key}"; the options are ${names.join(", ")}`);
}
