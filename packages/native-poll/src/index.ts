/**
 * @bobbin/native-poll — Bobbin's native I/O backends for `@bobbin/unix`: the
 * native backend (a poller in a C++ addon: epoll on Linux, kqueue on macOS;
 * raw non-blocking socket system calls; Chip-style arena buffers behind
 * `readSlot`) and the io_uring backend (Linux). The poller, the system calls
 * and the errno helpers they are built on are `@bobbin/native-poll/backend`.
 *
 * @example
 * ```ts
 * import { run } from "@bobbin/unix";
 * import { nativeBackend } from "@bobbin/native-poll";
 * await run(main, { backend: nativeBackend });   // in every domain of the run
 * ```
 * @packageDocumentation
 */

export { ArenaPool, type ArenaPoolOptions, type ArenaStats, Slot } from "./arena.js";
export { nativeAvailable } from "./available.js";
export { nativeBackend } from "./epoll/factory.js";
export type { NativeBackend, NativeBackendOptions } from "./epoll/options.js";
export { readSlot, releaseSlot } from "./epoll/slots.js";
export { type ArenaErrorKind, ArenaOverflow, SlotNotAllocated } from "./errors.js";
export type { PollerStats } from "./poller-stats.js";
export { NativeUnavailable } from "./unavailable.js";
export { uringBackend } from "./uring/factory.js";
export type { UringBackend, UringBackendOptions } from "./uring/options.js";
export { type UringSupport, UringUnavailable, uringAvailable, uringSupport } from "./uring/support.js";
