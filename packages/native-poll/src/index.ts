/**
 * @bobbin/native-poll — Bobbin's native I/O: an epoll/kqueue poller in Node's
 * loop, raw non-blocking socket system calls, Chip-style arena buffers, a
 * backend for `@bobbin/unix` built on them, and an io_uring backend (Linux).
 *
 * @example
 * ```ts
 * import { run } from "@bobbin/unix";
 * import { nativeBackend } from "@bobbin/native-poll";
 * await run(main, { backend: nativeBackend });   // in every domain of the run
 * ```
 * @packageDocumentation
 */

// Addresses and socket kinds are @bobbin/unix's own types: `{ host, port }`
// (numeric host for the raw syscalls) or `{ path }` (a leading "\0" makes a
// Linux abstract socket); "tcp4" | "tcp6" | "udp4" | "udp6" | "unix". They are
// re-exported here, not through the `syscalls` namespace: the bundler of the
// published declarations turns a namespace's type re-exports into values.
export type { Address, InetAddress, SocketKind, UnixAddress } from "@bobbin/unix";
export { ArenaPool, type ArenaPoolOptions, type ArenaStats, Slot } from "./arena.js";
export { NativeBackend, type NativeBackendOptions, nativeBackend } from "./epoll/backend.js";
export { readSlot, releaseSlot } from "./epoll/slots.js";
export { type ArenaErrorKind, ArenaOverflow, check, errnoException, errnoName, SlotNotAllocated } from "./errors.js";
export { loadNative, type NativeInfo, NativeUnavailable, nativeAvailable } from "./load.js";
export { PollEvent, Poller, type PollerOptions, type PollerStats, type PollHandler, type PollMode } from "./poller.js";
/**
 * Raw non-blocking socket system calls: each returns its result (≥ 0) or a negative errno,
 * never throwing for an operating-system failure.
 *
 * @example
 * ```ts
 * const fd = syscalls.socket("tcp4");
 * check(syscalls.connect(fd, { host: "127.0.0.1", port: 7 }), "connect");   // or -EINPROGRESS
 * ```
 */
export * as syscalls from "./syscalls.js";
export { Errno } from "./syscalls.js";
export { UringBackend, type UringBackendOptions, uringBackend } from "./uring/backend.js";
export { type UringSupport, UringUnavailable, uringAvailable, uringSupport } from "./uring/support.js";
