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
export { Poller, PollEvent, type PollMode, type PollHandler, type PollerOptions } from "./poller.js";
export { ArenaPool, Slot, type ArenaPoolOptions, type ArenaStats } from "./arena.js";
export * as syscalls from "./syscalls.js";
export { Errno, type Address, type InetAddress, type UnixAddress, type SocketKind } from "./syscalls.js";
export { ArenaOverflow, SlotNotAllocated, check, errnoException, errnoName, type ArenaErrorKind } from "./errors.js";
export { NativeUnavailable, loadNative, nativeAvailable } from "./load.js";
export { NativeBackend, nativeBackend, readSlot, releaseSlot, type NativeBackendOptions } from "./backend.js";
