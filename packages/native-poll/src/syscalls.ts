/**
 * Raw non-blocking socket system calls.
 *
 * Every function returns its result (≥ 0) or a **negative errno**
 * (`-EAGAIN`, `-ECONNREFUSED`…) and never throws for an operating-system
 * failure: that keeps the hot path free of exceptions. Turn a negative result
 * into a Node-style error with `errnoException(rc, "read")` or `check(rc,
 * "read")`, or name it with `errnoName(rc)`; compare with the constants of
 * {@link Errno}. Misuse (a wrong argument type, an offset outside the buffer)
 * throws `TypeError`/`RangeError` at once.
 *
 * Sockets are non-blocking and close-on-exec. Hosts are numeric IPv4/IPv6
 * addresses (resolve names first, e.g. with `dns.lookup`); an IPv6 host may
 * carry a `%scope`. A write into memory that is an arena slot first checks the
 * slot (allocated, range inside it, canary intact) and throws `ArenaOverflow`
 * or `SlotNotAllocated` otherwise.
 */
import { constants as osConstants } from "node:os";
import { describe } from "@bobbin/core/lowlevel";
import type { Address, SocketKind } from "@bobbin/unix";
import { loadAddon, type NativeAddressOut, type NativeSyscalls } from "./load.js";

/**
 * Negative errno values to compare results with (`rc === Errno.EAGAIN`).
 *
 * @example
 * ```ts
 * const n = syscalls.read(fd, buf);
 * if (n === Errno.EAGAIN) waitForReadable(fd);
 * ```
 * @throws never (constants).
 */
export const Errno = {
  EAGAIN: -osConstants.errno.EAGAIN,
  EWOULDBLOCK: -osConstants.errno.EWOULDBLOCK,
  EINPROGRESS: -osConstants.errno.EINPROGRESS,
  EINTR: -osConstants.errno.EINTR,
  EBADF: -osConstants.errno.EBADF,
  EINVAL: -osConstants.errno.EINVAL,
  EEXIST: -osConstants.errno.EEXIST,
  ENOENT: -osConstants.errno.ENOENT,
  EPIPE: -osConstants.errno.EPIPE,
  ECONNRESET: -osConstants.errno.ECONNRESET,
  ECONNREFUSED: -osConstants.errno.ECONNREFUSED,
  ECONNABORTED: -osConstants.errno.ECONNABORTED,
  EPROTO: -osConstants.errno.EPROTO,
  ENOTCONN: -osConstants.errno.ENOTCONN,
  EADDRINUSE: -osConstants.errno.EADDRINUSE,
  EMFILE: -osConstants.errno.EMFILE,
  ENFILE: -osConstants.errno.ENFILE,
  ENOBUFS: -osConstants.errno.ENOBUFS,
  ECANCELED: -osConstants.errno.ECANCELED,
  EBUSY: -osConstants.errno.EBUSY,
  ENOMEM: -osConstants.errno.ENOMEM,
} as const;

let sys: NativeSyscalls | null = null;
function native(): NativeSyscalls {
  return (sys ??= loadAddon().syscalls);
}

/** @internal The addon's address family of a kind: 4, 6, or 1 (Unix). */
export function familyOf(kind: SocketKind): number {
  switch (kind) {
    case "tcp4":
    case "udp4":
      return 4;
    case "tcp6":
    case "udp6":
      return 6;
    case "unix":
      return 1;
    default:
      throw new TypeError(`socket(kind): kind must be "tcp4", "tcp6", "udp4", "udp6" or "unix", got ${describe(kind)}`);
  }
}

/** @internal The addon's socket type of a kind: 2 (datagram) or 1 (stream). */
export function typeOf(kind: SocketKind): number {
  return kind === "udp4" || kind === "udp6" ? 2 : 1;
}

function hostAndPort(addr: Address, fn: string): [string, number] {
  if (addr !== null && typeof addr === "object") {
    if ("path" in addr && typeof addr.path === "string") return [addr.path, -1];
    if ("host" in addr && typeof addr.host === "string" && Number.isInteger(addr.port) && addr.port >= 0 && addr.port <= 65535) {
      return [addr.host, addr.port];
    }
  }
  throw new TypeError(`${fn}: the address must be { host, port } (numeric host, port 0..65535) or { path }`);
}

function range(buf: ArrayBufferView, off: number | undefined, len: number | undefined): [number, number] {
  const o = off ?? 0;
  return [o, len ?? buf.byteLength - o];
}

function toAddress(out: NativeAddressOut): Address {
  return out as Address; // the addon wrote { host, port } or { path }
}

/**
 * A new non-blocking, close-on-exec socket. Returns the fd or a negative errno.
 *
 * @example
 * ```ts
 * const fd = check(syscalls.socket("tcp4"), "socket");
 * ```
 * @throws TypeError for an unknown kind.
 */
export function socket(kind: SocketKind): number {
  return native().socket(familyOf(kind), typeOf(kind));
}

/**
 * Binds `fd` to `addr`. 0 or a negative errno (`EADDRINUSE`, `EINVAL` for a non-numeric host…).
 *
 * @example
 * ```ts
 * check(syscalls.bind(fd, { host: "127.0.0.1", port: 0 }), "bind");
 * ```
 * @throws TypeError for a malformed address.
 */
export function bind(fd: number, addr: Address): number {
  const [host, port] = hostAndPort(addr, "bind");
  return native().bind(fd, host, port);
}

/**
 * Marks a bound stream socket as accepting connections. 0 or a negative errno.
 *
 * @example
 * ```ts
 * check(syscalls.listen(fd, 511), "listen");
 * ```
 * @throws TypeError when an argument is not a number.
 */
export function listen(fd: number, backlog = 511): number {
  return native().listen(fd, backlog);
}

/**
 * Takes one pending connection: a new non-blocking fd, or a negative errno
 * (`Errno.EAGAIN` when none is pending). When `from` is given, the peer's
 * address is stored in `from.address`.
 *
 * @example
 * ```ts
 * const client = syscalls.accept(server);
 * if (client === Errno.EAGAIN) waitUntilReadable(server);
 * ```
 * @throws TypeError when `fd` is not a number.
 */
export function accept(fd: number, from?: { address?: Address }): number {
  if (from === undefined) return native().accept(fd);
  const out: NativeAddressOut = {};
  const c = native().accept(fd, out);
  if (c >= 0) from.address = toAddress(out);
  return c;
}

/**
 * Starts connecting: 0 (connected), `Errno.EINPROGRESS` (wait until writable,
 * then read the outcome with {@link socketError}), or a negative errno.
 *
 * @example
 * ```ts
 * const rc = syscalls.connect(fd, { host: "127.0.0.1", port: 8080 });
 * if (rc === Errno.EINPROGRESS) waitUntilWritable(fd);   // then: check(syscalls.socketError(fd), "connect")
 * ```
 * @throws TypeError for a malformed address.
 */
export function connect(fd: number, addr: Address): number {
  const [host, port] = hostAndPort(addr, "connect");
  return native().connect(fd, host, port);
}

/**
 * The socket's pending error (`SO_ERROR`), as 0 or a negative errno: how a
 * non-blocking `connect` ended.
 *
 * @example
 * ```ts
 * const err = syscalls.socketError(fd);   // e.g. Errno.ECONNREFUSED
 * ```
 * @throws TypeError when `fd` is not a number.
 */
export function socketError(fd: number): number {
  return native().socketError(fd);
}

/**
 * Reads at most `len` bytes into `buf[off…]`: the count (0 at end of stream)
 * or a negative errno (`Errno.EAGAIN` when nothing is there yet).
 *
 * @example
 * ```ts
 * const n = syscalls.read(fd, buf);
 * ```
 * @throws RangeError when `off`/`len` fall outside `buf`.
 * @throws ArenaOverflow / SlotNotAllocated when `buf` is an arena slot that was overrun or released.
 */
export function read(fd: number, buf: ArrayBufferView, off?: number, len?: number): number {
  const [o, l] = range(buf, off, len);
  return native().read(fd, buf, o, l);
}

/**
 * Writes at most `len` bytes from `buf[off…]`: the count written (maybe
 * fewer) or a negative errno (`Errno.EAGAIN` when the socket buffer is full).
 *
 * @example
 * ```ts
 * const n = syscalls.write(fd, Buffer.from("hello"));
 * ```
 * @throws RangeError when `off`/`len` fall outside `buf`.
 */
export function write(fd: number, buf: ArrayBufferView, off?: number, len?: number): number {
  const [o, l] = range(buf, off, len);
  return native().write(fd, buf, o, l);
}

/**
 * Scatter read into several buffers, in order: the total count or a negative errno.
 *
 * @example
 * ```ts
 * const n = syscalls.readv(fd, [header, body]);
 * ```
 * @throws TypeError when `bufs` is not an array of typed arrays.
 * @throws ArenaOverflow / SlotNotAllocated as {@link read}.
 */
export function readv(fd: number, bufs: readonly ArrayBufferView[]): number {
  return native().readv(fd, bufs);
}

/**
 * Gather write from several buffers in one system call: the total count
 * written (maybe fewer) or a negative errno.
 *
 * @example
 * ```ts
 * const n = syscalls.writev(fd, [header, body]);
 * ```
 * @throws TypeError when `bufs` is not an array of typed arrays.
 */
export function writev(fd: number, bufs: readonly ArrayBufferView[]): number {
  return native().writev(fd, bufs);
}

/**
 * Receives one datagram into `buf[off…]` (truncated to `len`): its length, or a
 * negative errno. When `from` is given, the sender's address is stored in
 * `from.address` (`{ host, port }` or `{ path }`).
 *
 * @example
 * ```ts
 * const from: { address?: Address } = {};
 * const n = syscalls.recvfrom(fd, buf, 0, buf.length, from);
 * ```
 * @throws RangeError when `off`/`len` fall outside `buf`.
 * @throws ArenaOverflow / SlotNotAllocated as {@link read}.
 */
export function recvfrom(fd: number, buf: ArrayBufferView, off?: number, len?: number, from?: { address?: Address }): number {
  const [o, l] = range(buf, off, len);
  if (from === undefined) return native().recvfrom(fd, buf, o, l);
  const out: NativeAddressOut = {};
  const n = native().recvfrom(fd, buf, o, l, out);
  if (n >= 0) from.address = toAddress(out);
  return n;
}

/**
 * Sends one datagram to `addr`: the bytes sent or a negative errno.
 *
 * @example
 * ```ts
 * syscalls.sendto(fd, Buffer.from("ping"), 0, 4, { host: "127.0.0.1", port: 9000 });
 * ```
 * @throws TypeError for a malformed address.
 * @throws RangeError when `off`/`len` fall outside `buf`.
 */
export function sendto(fd: number, buf: ArrayBufferView, off: number, len: number, addr: Address): number {
  const [host, port] = hostAndPort(addr, "sendto");
  return native().sendto(fd, buf, off, len, host, port);
}

/**
 * Shuts down one or both directions of a connection. 0 or a negative errno.
 *
 * @example
 * ```ts
 * syscalls.shutdown(fd, "send");   // the peer reads end of stream
 * ```
 * @throws TypeError for an unknown direction.
 */
export function shutdown(fd: number, how: "receive" | "send" | "both"): number {
  const h = how === "receive" ? 0 : how === "send" ? 1 : how === "both" ? 2 : -1;
  if (h < 0) throw new TypeError(`shutdown(fd, how): how must be "receive", "send" or "both", got ${describe(how)}`);
  return native().shutdown(fd, h);
}

/**
 * Closes a file descriptor. 0 or a negative errno. Remove it from any poller
 * first (or use `Poller.close`), as epoll may still report it otherwise.
 *
 * @example
 * ```ts
 * syscalls.close(fd);
 * ```
 * @throws TypeError when `fd` is not a number.
 */
export function close(fd: number): number {
  return native().close(fd);
}

/**
 * Duplicates a file descriptor (`fcntl(fd, F_DUPFD_CLOEXEC, 0)`): the lowest
 * free fd, close-on-exec, sharing the open file (and its `O_NONBLOCK`) with
 * `fd`; or a negative errno (`EBADF`, `EMFILE`). How a domain gets a
 * descriptor of its own for a listening socket shared by another domain.
 *
 * @example
 * ```ts
 * const mine = check(syscalls.dup(shared.fd), "dup");
 * ```
 * @throws TypeError when `fd` is not a number.
 */
export function dup(fd: number): number {
  return native().dup(fd);
}

/**
 * Socket option constants of this platform (`SOL_SOCKET`, `SO_REUSEADDR`,
 * `IPPROTO_TCP`, `TCP_NODELAY`, …), for {@link setsockopt}/{@link getsockopt}.
 *
 * @example
 * ```ts
 * const { SOL_SOCKET, SO_REUSEADDR } = sockopts();
 * ```
 * @throws NativeUnavailable when the addon is not built.
 */
export function sockopts(): Readonly<Record<string, number>> {
  return loadAddon().sockopts;
}

/**
 * Sets an integer socket option. 0 or a negative errno.
 *
 * @example
 * ```ts
 * const o = sockopts();
 * syscalls.setsockopt(fd, o.IPPROTO_TCP!, o.TCP_NODELAY!, 1);
 * ```
 * @throws TypeError when an argument is not a number.
 */
export function setsockopt(fd: number, level: number, name: number, value: number): number {
  return native().setsockopt(fd, level, name, value);
}

/**
 * Reads an integer socket option: its value (≥ 0) or a negative errno.
 *
 * @example
 * ```ts
 * const o = sockopts();
 * syscalls.getsockopt(fd, o.SOL_SOCKET!, o.SO_RCVBUF!);
 * ```
 * @throws TypeError when an argument is not a number.
 */
export function getsockopt(fd: number, level: number, name: number): number {
  return native().getsockopt(fd, level, name);
}

/**
 * The address `fd` is bound to, or a negative errno.
 *
 * @example
 * ```ts
 * const addr = syscalls.localAddress(fd);   // { host: "127.0.0.1", port: 41234 }
 * ```
 * @throws TypeError when `fd` is not a number.
 */
export function localAddress(fd: number): Address | number {
  const out: NativeAddressOut = {};
  const rc = native().getsockname(fd, out);
  return rc < 0 ? rc : toAddress(out);
}

/**
 * The address of the peer of a connected socket, or a negative errno.
 *
 * @example
 * ```ts
 * const peer = syscalls.peerAddress(fd);
 * ```
 * @throws TypeError when `fd` is not a number.
 */
export function peerAddress(fd: number): Address | number {
  const out: NativeAddressOut = {};
  const rc = native().getpeername(fd, out);
  return rc < 0 ? rc : toAddress(out);
}

/**
 * A non-blocking pipe: `[readFd, writeFd]`, or a negative errno.
 *
 * @example
 * ```ts
 * const p = syscalls.pipe();
 * if (typeof p === "number") throw errnoException(p, "pipe");
 * ```
 * @throws NativeUnavailable when the addon is not built.
 */
export function pipe(): [number, number] | number {
  return native().pipe();
}

/**
 * A connected pair of non-blocking Unix sockets: `[a, b]`, or a negative errno.
 *
 * @example
 * ```ts
 * const pair = syscalls.socketpair("stream");
 * ```
 * @throws TypeError for an unknown type.
 */
export function socketpair(type: "stream" | "dgram" = "stream"): [number, number] | number {
  if (type !== "stream" && type !== "dgram") throw new TypeError(`socketpair(type): type must be "stream" or "dgram"`);
  return native().socketpair(type === "stream" ? 1 : 2);
}
