/**
 * `defineBackend`: a backend factory that worker domains can find again, so
 * that each domain of a run has a backend of its own (core's
 * `defineEvents`, for backends of `@bobbin/unix`).
 */
import { defineEvents, describe, type Events } from "@bobbin/core/lowlevel";
import { BACKEND_METHODS } from "./backend/backend-methods.js";
import { registerBackend } from "./context.js";
import type { Backend } from "./contract.js";
import { shareSockets } from "./share.js";

type Factory = (domain: number) => Backend;

/** The events factory registered with core for each backend factory. */
const registered = new WeakMap<Factory, (domain: number) => Events>();

/** Dom0's backend, made by `run` and handed to core's `run`, which asks its factory for domain 0. */
let dom0Backend: Backend | null = null;

/**
 * Names a backend factory so that worker domains make their own backend with
 * it (one per domain), and returns the factory. Call it at the top level of
 * a module with no other side effects (worker domains import that module),
 * with that module's `import.meta.url`; then pass the factory to `run`. The
 * default `libuv` factory is defined this way.
 *
 * @example
 * ```ts
 * // backend.ts — imported by main.ts, and by worker domains
 * export const fastLibuv = defineBackend(import.meta.url, "fastLibuv", () => libuv({ flush: "microtask" }));
 * // main.ts
 * await run(main, { backend: fastLibuv, domains: 2 });   // sleep, sockets, withTimeout work in B.call tasks
 * ```
 * @throws TypeError when `url` is not a module URL, `name` is empty or `factory` is not a function.
 */
export function defineBackend<F extends Factory>(url: string, name: string, factory: F): F {
  if (typeof url !== "string" || !/^[a-z][a-z0-9+.-]*:/i.test(url)) {
    throw new TypeError(`defineBackend(url, name, factory) expects the defining module's import.meta.url as url, got ${describe(url)}`);
  }
  if (typeof name !== "string" || name.length === 0) throw new TypeError("defineBackend(url, name, factory) expects a non-empty name");
  if (typeof factory !== "function") throw new TypeError(`defineBackend(url, "${name}", factory) expects a factory (domain) => Backend`);
  const events = (domain: number): Events => {
    if (domain === 0 && dom0Backend !== null) {
      const made = dom0Backend;
      dom0Backend = null;
      return made;
    }
    const backend = factory(domain);
    checkBackend(backend);
    registerBackend(backend);
    shareSockets();
    return backend;
  };
  defineEvents(url, name, events);
  registered.set(factory, events);
  return factory;
}

/**
 * @internal Runs core's `run` (`start`) with events that serve `backend` to
 * dom0 and, when `factory` was defined with `defineBackend`, make a backend
 * in each worker domain.
 */
export function startWith<T>(factory: Factory, backend: Backend, start: (events: (domain: number) => Events) => T): T {
  const events = registered.get(factory);
  if (events === undefined) return start(() => backend);
  dom0Backend = backend;
  try {
    return start(events);
  } finally {
    dom0Backend = null;
  }
}

/** @internal Checks that a factory made a backend with every method of the contract. */
export function checkBackend(backend: unknown): asserts backend is Backend {
  if (backend === null || typeof backend !== "object") {
    throw new TypeError(`run(main, { backend }): the factory returned ${describe(backend)}, not a Backend`);
  }
  const missing = BACKEND_METHODS.filter((m) => typeof (backend as Record<string, unknown>)[m] !== "function");
  if (missing.length !== 0) {
    throw new TypeError(
      `run(main, { backend }): the backend lacks ${missing.join(", ")} (see "How to write a backend" in @bobbin/unix's README)`,
    );
  }
}
