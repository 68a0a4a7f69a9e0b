/**
 * @bobbin/native-poll — Bobbin's native I/O: an epoll/kqueue poller in Node's
 * loop, raw non-blocking socket system calls, Chip-style arena buffers, and a
 * backend for `@bobbin/unix` built on them.
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
export { NativeBackend, type NativeBackendOptions, nativeBackend, readSlot, releaseSlot } from "./backend.js";
export { type ArenaErrorKind, ArenaOverflow, check, errnoException, errnoName, SlotNotAllocated } from "./errors.js";
export { loadNative, NativeUnavailable, nativeAvailable } from "./load.js";
export { PollEvent, Poller, type PollerOptions, type PollHandler, type PollMode } from "./poller.js";
export * as syscalls from "./syscalls.js";
export { type Address, Errno, type InetAddress, type SocketKind, type UnixAddress } from "./syscalls.js";
