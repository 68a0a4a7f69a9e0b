/** The error of asking for the native addon where it is not available. */
import { fileURLToPath } from "node:url";
import { BobbinError } from "@bobbin/core";
import { howToBuild } from "../scripts/advice.mjs";

/** @internal The package's directory: src/ (tests) and dist/ (bundled) both sit one level below it. */
export const PACKAGE_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * The native addon is not available: no prebuilt binary for this platform
 * and no build from source (no C++ compiler, or the install script did not
 * run), or it cannot load here. `@bobbin/unix`'s default libuv backend works
 * without it.
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
    super([`@bobbin/native-poll: the native addon is not available (${reason}).`, ...howToBuild(PACKAGE_ROOT)].join("\n"));
  }
}
