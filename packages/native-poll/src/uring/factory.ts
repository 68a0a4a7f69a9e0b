/** `uringBackend`: the factory of the io_uring backend, as programs pass it to `run`. */
import { defineBackend } from "@bobbin/unix";
import { IoUringBackend } from "./backend.js";
import type { UringBackend, UringBackendOptions } from "./options.js";

/**
 * Makes an io_uring backend for `@bobbin/unix`'s `run` (Linux 6.0 or later):
 * pass `uringBackend` itself as the `backend` factory. Defined with
 * `defineBackend`, so every worker domain of the run makes its own (its own
 * ring, in its own thread), and listening sockets can be given to `B.call` /
 * `B.parallel`. For options, define a factory of your own with
 * `defineBackend`.
 *
 * @example
 * ```ts
 * import { run } from "@bobbin/unix";
 * import { nativeBackend, uringAvailable, uringBackend } from "@bobbin/native-poll";
 * await run(main, { backend: uringAvailable() ? uringBackend : nativeBackend });
 * ```
 * @throws UringUnavailable where io_uring cannot work (its `reason` says why; see `uringSupport`).
 * @throws RangeError for bad options.
 */
export const uringBackend: (options?: UringBackendOptions | number) => UringBackend = defineBackend(
  import.meta.url,
  "uring",
  function uringBackend(options?: UringBackendOptions | number): UringBackend {
    return new IoUringBackend(typeof options === "object" && options !== null ? options : {});
  },
);
