/** The error of asking for the native addon where it is not available. */
import { BobbinError } from "@bobbin/core";

/**
 * The native addon is not available: it was not built (no C++ compiler when
 * the package was installed), or cannot load on this platform. `@bobbin/unix`'s
 * default libuv backend works without it.
 *
 * @example
 * ```ts
 * import { nativeAvailable, nativeBackend } from "@bobbin/native-poll";
 * const backend = nativeAvailable() ? () => nativeBackend() : undefined;   // undefined: the libuv default
 * ```
 * @throws never (an error class: it is thrown, its constructor does not throw).
 */
export class NativeUnavailable extends BobbinError {
  /** Always `"ERR_BOBBIN_NATIVE_UNAVAILABLE"`. */
  readonly code = "ERR_BOBBIN_NATIVE_UNAVAILABLE";
  constructor(
    /** Why loading failed. */
    readonly reason: string,
  ) {
    super(
      `@bobbin/native-poll: the native addon is not available (${reason}). ` +
        "Build it with `pnpm --filter @bobbin/native-poll run build:native` " +
        "(or `node scripts/build.mjs --strict` in the package directory); it needs a C++ compiler " +
        "(g++ or clang++), python3 and make, and builds against the headers of the Node that runs it. " +
        "Without it, @bobbin/unix's default libuv backend works as usual.",
    );
  }
}
