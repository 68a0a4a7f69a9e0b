/**
 * Default task names: a task is named after its body's function. The record
 * has no field for the body once the generator exists, so the name is found
 * from the generator's prototype (a generator function's `prototype` is the
 * prototype of every generator it makes), registered once per body.
 */

const byPrototype = new WeakMap<object, string>();
/** The last body registered: a loop spawning one body pays a comparison, not a lookup. */
let lastBody: unknown = null;

/** @internal Remembers `body`'s name for the generators it makes. */
export function registerBody(body: (...args: never[]) => unknown): void {
  if (body === lastBody) return;
  lastBody = body;
  const prototype: unknown = body.prototype;
  if (prototype !== null && typeof prototype === "object" && !byPrototype.has(prototype)) byPrototype.set(prototype, nameOf(body));
}

/** @internal Remembers `name` for a generator made by a function that is not a generator function. */
export function registerGenerator(gen: object, name: string): void {
  const prototype: unknown = Object.getPrototypeOf(gen);
  if (prototype !== null && typeof prototype === "object" && !byPrototype.has(prototype)) byPrototype.set(prototype, name);
}

/**
 * @internal The name behind a task's `gen` field: its body (unborn), its
 * generator (running), or its generator's prototype (ended).
 */
export function bodyName(gen: unknown): string {
  if (typeof gen === "function") return nameOf(gen);
  if (gen === null || typeof gen !== "object") return "anonymous";
  return byPrototype.get(gen) ?? byPrototype.get(Object.getPrototypeOf(gen) as object) ?? "anonymous";
}

function nameOf(fn: { readonly name: string }): string {
  return fn.name === "" ? "anonymous" : fn.name;
}
