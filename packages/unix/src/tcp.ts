/**
 * Stream sockets: `tcpv4`, `tcpv6`, `unixSocket`, and `bindAndListen`,
 * `accept`, `connect` (which also binds UDP sockets: see udp.ts).
 */
import type * as B from "@bobbin/core";
import { describe } from "@bobbin/core/lowlevel";
import { currentBackend } from "./context.js";
import type { Address, ListenOptions, Socket } from "./contract.js";
import { SocketClosed } from "./errors.js";
import { operationFrom } from "./from-backend.js";
import { isStreamKind } from "./kinds.js";
import { checkAddress, checkSocket } from "./socket.js";
import { systemError } from "./system-error.js";

/**
 * A new TCP/IPv4 socket of the current run's backend (Miou's `tcpv4`).
 * Never suspends; `bindAndListen` or `connect` it next.
 *
 * @example
 * ```ts
 * const server = tcpv4();
 * yield* bindAndListen(server, { host: "127.0.0.1", port: 8080 });
 * ```
 * @throws TypeError outside a task of `@bobbin/unix`'s `run`, or in a worker domain with no backend (see `defineBackend`).
 */
export function tcpv4(): Socket {
  return currentBackend("tcpv4()").socket("tcp4");
}

/**
 * A new TCP/IPv6 socket (Miou's `tcpv6`).
 *
 * @example
 * ```ts
 * const sock = tcpv6();
 * yield* connect(sock, { host: "::1", port: 8080 });
 * ```
 * @throws TypeError outside a task of `@bobbin/unix`'s `run`, or in a worker domain with no backend (see `defineBackend`).
 */
export function tcpv6(): Socket {
  return currentBackend("tcpv6()").socket("tcp6");
}

/**
 * A new Unix-domain stream socket; its addresses are `{ path }`.
 *
 * @example
 * ```ts
 * const server = unixSocket();
 * yield* bindAndListen(server, { path: "/tmp/app.sock" });
 * ```
 * @throws TypeError outside a task of `@bobbin/unix`'s `run`, or in a worker domain with no backend (see `defineBackend`).
 */
export function unixSocket(): Socket {
  return currentBackend("unixSocket()").socket("unix");
}

/** The largest backlog: listen(2)'s is a C `int`. */
const MAX_BACKLOG = 2 ** 31 - 1;

/**
 * Binds a fresh socket to `addr` and, for TCP and Unix sockets, listens
 * (Miou's `bind_and_listen`). Port 0 lets the system choose: see
 * `getsockname`. On a UDP socket it binds only. A socket whose bind failed
 * (`EADDRINUSE`…) is fresh again.
 *
 * `backlog` (default 511, at most 2^31 − 1) bounds the kernel's queue of
 * connections not yet accepted; the system clamps it to its own limit
 * (Linux: `net.core.somaxconn`, 4096 by default since 5.4, 128 before;
 * macOS: `kern.ipc.somaxconn`, 128). `reuseAddr` (default true) sets
 * `SO_REUSEADDR` (the libuv backend always sets it on TCP listeners, as
 * libuv does).
 *
 * @example
 * ```ts
 * const server = tcpv4();
 * yield* bindAndListen(server, { host: "127.0.0.1", port: 0 }, { backlog: 128 });
 * const udp = udpv4();
 * yield* bindAndListen(udp, { host: "127.0.0.1", port: 5353 });
 * ```
 * @throws TypeError when the socket is not fresh or the address does not suit it.
 * @throws RangeError for a bad port, or a backlog that is not an integer from 0 to 2^31 − 1.
 * @throws SocketClosed when the socket is closed.
 * @throws the system error (`EADDRINUSE`, `EACCES`, `EAFNOSUPPORT`…), to this task only.
 */
export function bindAndListen(sock: Socket, addr: Address, options: ListenOptions = {}): B.Operation<void> {
  const s = checkSocket(sock, "bindAndListen()");
  if (options === null || typeof options !== "object") {
    throw new TypeError(`bindAndListen(sock, addr, options) expects options { backlog, reuseAddr }, got ${describe(options)}`);
  }
  const backlog = options.backlog ?? 511;
  if (typeof backlog !== "number" || !Number.isInteger(backlog) || backlog < 0 || backlog > MAX_BACKLOG) {
    throw new RangeError(
      `bindAndListen(): backlog must be an integer from 0 to ${MAX_BACKLOG} (listen(2) takes an int; the system clamps it to its own limit), got ${describe(options.backlog)}`,
    );
  }
  const reuseAddr = options.reuseAddr ?? true;
  if (typeof reuseAddr !== "boolean") throw new TypeError(`bindAndListen(): reuseAddr must be a boolean, got ${describe(reuseAddr)}`);
  if (s.state === "closed") throw new SocketClosed("bindAndListen()");
  if (s.state !== "fresh") {
    throw new TypeError(`bindAndListen() needs a fresh socket (bind each socket once); this one is ${s.state}`);
  }
  const address = checkAddress(addr, s.kind, "bindAndListen()", false);
  return operationFrom(s.backend.bindAndListen(s, address, { backlog, reuseAddr }), s.backend, "bindAndListen");
}

/**
 * Waits for a connection on a listening socket and returns the new
 * connected socket with the peer's address (`{ host, port }`; `{ path: "" }`
 * for Unix sockets). A failure to accept (`EMFILE` when the process is out of
 * file descriptors…) is thrown to this task only: the listener keeps working.
 *
 * @example
 * ```ts
 * const bg = B.orphans<void>();
 * for (;;) {
 *   const [client, peer] = yield* accept(server);
 *   B.spawn({ orphans: bg }, echo, client);
 * }
 * ```
 * @throws TypeError when the socket is not a listening stream socket.
 * @throws SocketClosed when the socket is (or gets) closed.
 * @throws the system error of the failed accept (`EMFILE`, `ENFILE`…).
 */
export function accept(sock: Socket): B.Operation<[Socket, Address]> {
  const s = checkSocket(sock, "accept()");
  if (!isStreamKind(s.kind)) throw new TypeError(`accept() needs a stream socket; this one is ${s.kind}: for UDP use recvfrom()`);
  if (s.state === "closed") throw new SocketClosed("accept()");
  if (s.state !== "listening") {
    throw new TypeError(`accept() needs a listening socket: call bindAndListen(sock, addr) first; this one is ${s.state}`);
  }
  return operationFrom(s.backend.accept(s), s.backend, "accept");
}

/**
 * Connects a fresh stream socket to `addr`. A hostname is resolved in the
 * socket's family. When it fails (`ECONNREFUSED`…), the socket is fresh
 * again (close it, or connect again).
 *
 * @example
 * ```ts
 * const sock = tcpv4();
 * yield* withTimeout(2, connect(sock, { host: "127.0.0.1", port: 8080 }));
 * ```
 * @throws TypeError for a UDP or listening socket, or an address that does not suit the socket.
 * @throws RangeError for a bad port.
 * @throws SocketClosed when the socket is (or gets) closed.
 * @throws Error with code `EISCONN` when it is already connected (or connecting).
 * @throws the system error (`ECONNREFUSED`, `ENOENT` for a missing Unix path, `EAFNOSUPPORT`…), to this task only.
 */
export function connect(sock: Socket, addr: Address): B.Operation<void> {
  const s = checkSocket(sock, "connect()");
  if (!isStreamKind(s.kind)) throw new TypeError(`connect() needs a stream socket; this one is ${s.kind}: for UDP use sendto()`);
  if (s.state === "closed") throw new SocketClosed("connect()");
  if (s.state === "listening") throw new TypeError("connect() on a listening socket: make a new socket to connect");
  if (s.state !== "fresh") throw systemError("EISCONN", "connect", `the socket is already ${s.state}`);
  const address = checkAddress(addr, s.kind, "connect()", true);
  return operationFrom(s.backend.connect(s, address), s.backend, "connect");
}
