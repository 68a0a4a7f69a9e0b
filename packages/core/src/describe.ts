/**
 * A value in a few words, for error messages that say what a function got:
 * `null`, `undefined`, `function name` (`async function name`, `async
 * generator function name`), `an array of 3`, `an object`,
 * `a Map` (the class name), a quoted string, or `number 3` (the type and
 * value of a primitive). A generator object — what calling a generator
 * function returns — says so, since it is the usual mistake where a
 * generator function belongs. Packages built on core use it so that every
 * message describes values alike.
 *
 * @example
 * ```ts
 * throw new TypeError(`listen(port) expects a number, got ${L.describe(port)}`);   // … got "3000"
 * ```
 * @throws never.
 */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "function")
    return `${isAsyncFunction(value) ? (value instanceof AsyncGeneratorFunction ? "async generator function" : "async function") : "function"} ${value.name || "(anonymous)"}`;
  if (typeof value === "object") {
    if (typeof (value as AsyncGenerator)[Symbol.asyncIterator] === "function") return "an async generator object";
    if (isGeneratorObject(value)) return GENERATOR_OBJECT;
    if (Array.isArray(value)) return `an array of ${value.length}`;
    const name = (value as object).constructor?.name;
    return name === undefined || name === "" || name === "Object" ? "an object" : `${/^[AEIOU]/.test(name) ? "an" : "a"} ${name}`;
  }
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "symbol") return value.toString();
  return `${typeof value} ${String(value)}`;
}

const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as FunctionConstructor;
const AsyncGeneratorFunction = Object.getPrototypeOf(async function* () {}).constructor as FunctionConstructor;

/** @internal Whether `fn` is an `async` function or an `async function*` (what a task's body must not be). */
export function isAsyncFunction(fn: unknown): boolean {
  return fn instanceof AsyncFunction || fn instanceof AsyncGeneratorFunction;
}

const GENERATOR_OBJECT = "a generator object (the generator function was called: pass the function itself, with its arguments after it)";

/** @internal Whether `value` is an iterator with `next` and `throw`: a generator object, most likely. */
export function isGeneratorObject(value: unknown): boolean {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as Generator).next === "function" &&
    typeof (value as Generator).throw === "function"
  );
}
