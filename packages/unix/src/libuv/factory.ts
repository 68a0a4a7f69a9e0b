/** `libuv`: the factory of the default backend, as programs pass it to `run`. */
import type { Backend } from "../contract.js";
import { defineBackend } from "../define.js";
import { LibuvBackend } from "./backend.js";
import type { LibuvOptions } from "./options.js";

/**
 * Makes a libuv backend: the default of `run`, defined with `defineBackend`
 * so that every worker domain of a run makes its own. Pass `libuv` itself as
 * `run`'s `backend` factory; for options, define a factory of your own with
 * `defineBackend` (an inline `() => libuv({ … })` serves dom0 only).
 *
 * @example
 * ```ts
 * await run(main);                                  // the libuv backend, in every domain
 * await run(main, { backend: libuv });              // the same, explicitly
 * export const eager = defineBackend(import.meta.url, "eager", () => libuv({ flush: "microtask" }));
 * await run(main, { backend: eager });
 * ```
 * @throws never.
 */
export const libuv: (options?: LibuvOptions | number) => Backend = defineBackend(
  import.meta.url,
  "libuv",
  function libuv(options?: LibuvOptions | number): LibuvBackend {
    return new LibuvBackend(typeof options === "object" && options !== null ? options : {});
  },
);
