/**
 * `defineEvents`: an events factory that worker domains can find again, as
 * `defineTask` does for task bodies. Apart from define-task.ts so that a
 * program's declarations (which name `defineTask`) never reach `Events`.
 */
import type { Events } from "../events.js";
import { checkName, key, stalledOn } from "./define-task.js";
import { definitionAdded, loadDefinition } from "./loading.js";

const eventsFactories = new Map<string, (domain: number) => Events>();
const eventsNames = new WeakMap<(domain: number) => Events, { url: string; name: string }>();

/**
 * Names an events factory so that worker domains can make their own backend
 * (each domain has one): like `defineTask`, for `L.runKernel(main, { events })`.
 *
 * @example
 * ```ts
 * export const events = L.defineEvents(import.meta.url, "events", (domain) => new MyBackend(domain));
 * await L.runKernel(main, { events, domains: 2 });
 * ```
 * @throws TypeError for a bad url or name, or when `factory` is not a function.
 */
export function defineEvents(url: string, name: string, factory: (domain: number) => Events): (domain: number) => Events {
  checkName(url, name, "defineEvents");
  if (typeof factory !== "function") throw new TypeError("defineEvents expects a factory (domain) => Events");
  eventsFactories.set(key(url, name), factory);
  eventsNames.set(factory, { url, name });
  definitionAdded();
  return factory;
}

/** @internal Where a worker finds the events factory again, if it was defined with `defineEvents`. */
export function eventsLocation(factory: ((domain: number) => Events) | undefined): { url: string; name: string } | null {
  return factory === undefined ? null : (eventsNames.get(factory) ?? null);
}

/** @internal Loads the module of an events factory in this thread. */
export function loadEvents(url: string, name: string): Promise<(domain: number) => Events> {
  return loadDefinition(
    url,
    () => eventsFactories.get(key(url, name)),
    () => new TypeError(`module ${url} does not define events named "${name}" with defineEvents`),
    () => stalledOn(url, `the events factory "${name}"`),
  );
}
