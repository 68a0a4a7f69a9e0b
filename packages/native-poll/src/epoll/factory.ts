/** `nativeBackend`: the factory of the native backend, as programs pass it to `run`. */
import { defineBackend } from "@bobbin/unix";
import { EpollBackend } from "./backend.js";
import type { NativeBackend, NativeBackendOptions } from "./options.js";

/**
 * Makes a native backend for `@bobbin/unix`'s `run`: pass `nativeBackend`
 * itself as the `backend` factory. It is defined with `defineBackend`, so
 * every worker domain of the run makes its own (its own epoll set, in its
 * own thread's loop), and listening sockets can be given to `B.call` /
 * `B.parallel`. For options, define a factory of your own with
 * `defineBackend` (an inline `() => nativeBackend({ … })` serves dom0 only).
 *
 * @example
 * ```ts
 * import { defineBackend, run } from "@bobbin/unix";
 * import { nativeBackend } from "@bobbin/native-poll";
 * await run(main, { backend: nativeBackend });                // in every domain
 * export const small = defineBackend(import.meta.url, "small", () => nativeBackend({ pool: { slotSize: 4096 } }));
 * await run(main, { backend: small });
 * ```
 * @throws NativeUnavailable when the addon is not built (the message says how to build it).
 * @throws RangeError for bad options.
 */
export const nativeBackend: (options?: NativeBackendOptions | number) => NativeBackend = defineBackend(
  import.meta.url,
  "native",
  function nativeBackend(options?: NativeBackendOptions | number): NativeBackend {
    return new EpollBackend(typeof options === "object" && options !== null ? options : {});
  },
);
