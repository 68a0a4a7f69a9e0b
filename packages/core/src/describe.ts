/**
 * A value in a few words, for error messages that say what a function got:
 * `null`, `undefined`, `function name`, `an array of 3`, `an object`,
 * `a Map` (the class name), a quoted string, or `number 3` (the type and
 * value of a primitive). Packages built on core use it so that every message
 * describes values alike.
 *
 * @example
 * ```ts
 * throw new TypeError(`listen(port) expects a number, got ${B.describe(port)}`);   // … got "3000"
 * ```
 */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "function") return `function ${value.name || "(anonymous)"}`;
  if (typeof value === "object") {
    const name = (value as object).constructor?.name;
    if (Array.isArray(value)) return `an array of ${value.length}`;
    return name === undefined || name === "Object" ? "an object" : `a ${name}`;
  }
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "symbol") return value.toString();
  return `${typeof value} ${String(value)}`;
}
