/**
 * Whether the io_uring backend works here, and the error for asking for it
 * where it does not.
 */
import { BobbinError } from "@bobbin/core";
import { type UringAddon, uringAddon } from "./native.js";

/**
 * What {@link uringSupport} found.
 *
 * @example
 * ```ts
 * const { available, reason } = uringSupport();
 * if (!available) console.log(`io_uring backend unavailable: ${reason}`);
 * ```
 * @throws never (a type).
 */
export interface UringSupport {
  /** The backend can be made here. */
  readonly available: boolean;
  /** Why not ("" when available): not Linux, addon not built, kernel too old, io_uring disabled… */
  readonly reason: string;
  /** The io_uring setup flags a ring gets here, by name (e.g. `["SINGLE_ISSUER", "DEFER_TASKRUN"]`); empty when unavailable. */
  readonly setup: readonly string[];
}

let found: UringSupport | null = null;

/**
 * Checks once per process, without throwing, whether the io_uring backend
 * works here: on Linux, with the addon built, a kernel whose io_uring has
 * multishot accept and recv and provided-buffer rings (Linux 6.0 or later),
 * and io_uring allowed (`kernel.io_uring_disabled`, seccomp filters of
 * containers). It sets up a small ring and runs a multishot recv and a
 * multishot accept on local sockets.
 *
 * @example
 * ```ts
 * import { uringSupport, uringBackend, nativeBackend } from "@bobbin/native-poll";
 * await run(main, { backend: uringSupport().available ? uringBackend : nativeBackend });
 * ```
 * @throws never.
 */
export function uringSupport(): UringSupport {
  if (found !== null) return found;
  const addon = uringAddon();
  if (typeof addon === "string") return (found = { available: false, reason: addon, setup: [] });
  const { reason, flags } = addon.uringProbe();
  if (reason !== "") return (found = { available: false, reason, setup: [] });
  const c = addon.uringConstants;
  const names: [string, number][] = [
    ["SINGLE_ISSUER", c.SETUP_SINGLE_ISSUER],
    ["DEFER_TASKRUN", c.SETUP_DEFER_TASKRUN],
    ["COOP_TASKRUN", c.SETUP_COOP_TASKRUN],
  ];
  return (found = { available: true, reason: "", setup: names.filter(([, bit]) => (flags & bit) !== 0).map(([name]) => name) });
}

/**
 * Whether the io_uring backend works here (`uringSupport().available`); never throws.
 *
 * @example
 * ```ts
 * await run(main, { backend: uringAvailable() ? uringBackend : nativeBackend });
 * ```
 * @throws never.
 */
export function uringAvailable(): boolean {
  return uringSupport().available;
}

/**
 * The io_uring backend was asked for where it cannot work; `reason` says
 * why (see {@link uringSupport}).
 *
 * @example
 * ```ts
 * try {
 *   await run(main, { backend: uringBackend });
 * } catch (e) {
 *   if (e instanceof UringUnavailable) await run(main, { backend: nativeBackend });
 * }
 * ```
 * @throws never (an error class: it is thrown, its constructor does not throw).
 */
export class UringUnavailable extends BobbinError {
  /** Always `"ERR_BOBBIN_URING_UNAVAILABLE"`. */
  readonly code = "ERR_BOBBIN_URING_UNAVAILABLE";
  constructor(
    /** Why the backend cannot work here. */
    readonly reason: string,
  ) {
    super(
      `@bobbin/native-poll: the io_uring backend is not available here (${reason}). ` +
        "Check with uringAvailable() first, and use nativeBackend (epoll/kqueue) or @bobbin/unix's default libuv backend instead.",
    );
  }
}

/**
 * @internal The addon's io_uring half.
 * @throws UringUnavailable when the backend cannot work here.
 */
export function requireUring(): UringAddon {
  const support = uringSupport();
  if (!support.available) throw new UringUnavailable(support.reason);
  return uringAddon() as UringAddon;
}
