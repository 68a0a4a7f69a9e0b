/**
 * `@bobbin/native-poll/backend` — what the native backends are built on, to
 * build another: the poller (epoll/kqueue in Node's loop, with read-ahead
 * and queued sends), the raw non-blocking socket system calls, which return
 * a negative errno rather than throw, and the helpers that turn one into a
 * Node-style error. A program needs none of it: it imports
 * `@bobbin/native-poll`.
 *
 * @example
 * ```ts
 * import { checkErrno, Poller, PollEvent, syscalls } from "@bobbin/native-poll/backend";
 * const fd = checkErrno(syscalls.socket("tcp4"), "socket");
 * ```
 * @packageDocumentation
 */

// Addresses and socket kinds are @bobbin/unix's own types: `{ host, port }`
// (numeric host for the raw syscalls) or `{ path }` (a leading "\0" makes a
// Linux abstract socket); "tcp4" | "tcp6" | "udp4" | "udp6" | "unix". They are
// re-exported here, not through the `syscalls` namespace: the bundler of the
// published declarations turns a namespace's type re-exports into values.
export type { Address, InetAddress, SocketKind, UnixAddress } from "@bobbin/unix";
export { checkErrno, errnoException, errnoName } from "../errno.js";
export { loadNative, type NativeInfo } from "../load.js";
export { PollEvent, Poller, type PollerOptions, type PollHandler, type PollMode } from "../poller.js";
export type { PollerStats } from "../poller-stats.js";
/**
 * Raw non-blocking socket system calls: each returns its result (≥ 0) or a negative errno,
 * never throwing for an operating-system failure.
 *
 * @example
 * ```ts
 * const fd = syscalls.socket("tcp4");
 * checkErrno(syscalls.connect(fd, { host: "127.0.0.1", port: 7 }), "connect");   // or -EINPROGRESS
 * ```
 */
export * as syscalls from "../syscalls.js";
export { Errno } from "../syscalls.js";
