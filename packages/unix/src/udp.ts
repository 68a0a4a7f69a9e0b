/**
 * Datagram sockets: `udpv4`, `udpv6`, `recvfrom`, `sendto`. Bind one with
 * `bindAndListen` (or let the first `sendto` bind it to an ephemeral port).
 */
import type * as B from "@bobbin/core";
import { currentBackend } from "./context.js";
import type { Address, InetAddress, Socket } from "./contract.js";
import { SocketClosed } from "./errors.js";
import { operationFrom } from "./from-backend.js";
import { isUdpKind } from "./kinds.js";
import { checkAddress, checkSocket, rangeLength, rangeStart } from "./socket.js";

/**
 * A new UDP/IPv4 socket of the current run's backend.
 *
 * @example
 * ```ts
 * const sock = udpv4();
 * yield* bindAndListen(sock, { host: "127.0.0.1", port: 0 });
 * ```
 * @throws TypeError outside a task of `@bobbin/unix`'s `run`, or in a worker domain with no backend (see `defineBackend`).
 */
export function udpv4(): Socket {
  return currentBackend("udpv4()").socket("udp4");
}

/**
 * A new UDP/IPv6 socket.
 *
 * @example
 * ```ts
 * const sock = udpv6();
 * yield* sendto(sock, Buffer.from("ping"), { host: "::1", port });
 * ```
 * @throws TypeError outside a task of `@bobbin/unix`'s `run`, or in a worker domain with no backend (see `defineBackend`).
 */
export function udpv6(): Socket {
  return currentBackend("udpv6()").socket("udp6");
}

function checkUdp(sock: unknown, what: string): Socket {
  const s = checkSocket(sock, what);
  if (!isUdpKind(s.kind)) {
    throw new TypeError(`${what} needs a UDP socket (udpv4, udpv6); this one is ${s.kind}: for streams use read()/write()`);
  }
  if (s.state === "closed") throw new SocketClosed(what);
  return s;
}

/**
 * Receives one datagram into `buf[off…]` (at most `len` bytes: the rest of a
 * longer datagram is dropped, as `recvfrom` does) and returns its length
 * and sender.
 *
 * @example
 * ```ts
 * const buf = Buffer.alloc(1500);
 * const [n, from] = yield* recvfrom(sock, buf);
 * yield* sendto(sock, buf, 0, n, from);   // echo
 * ```
 * @throws TypeError for a stream socket or one not bound yet (bind it, or `sendto` first).
 * @throws RangeError for a negative or out-of-bounds `off`/`len`.
 * @throws SocketClosed when the socket is (or gets) closed.
 * @throws the socket's system error, to this task only.
 */
export function recvfrom(sock: Socket, buf: Uint8Array, off?: number, len?: number): B.Operation<[number, Address]> {
  const s = checkUdp(sock, "recvfrom()");
  const o = rangeStart(buf, off, "recvfrom()");
  const l = rangeLength(buf, o, len, "recvfrom()");
  if (s.state !== "bound") {
    throw new TypeError("recvfrom() needs a bound socket: bindAndListen(sock, { host, port }) it, or sendto() from it first");
  }
  return operationFrom(s.backend.recvfrom(s, buf, o, l), s.backend, "recvfrom");
}

/**
 * Sends `buf[off, off + len)` (default: all of `buf`) as one datagram to
 * `addr` and returns the bytes sent. A fresh socket is bound to an
 * ephemeral port by its first `sendto`.
 *
 * @example
 * ```ts
 * yield* sendto(sock, Buffer.from("ping"), { host: "127.0.0.1", port });
 * yield* sendto(sock, buf, 0, n, from);
 * ```
 * @throws TypeError for a stream socket or an address that does not suit the socket.
 * @throws RangeError for a bad port or a negative or out-of-bounds `off`/`len`.
 * @throws SocketClosed when the socket is (or gets) closed.
 * @throws the system error (`EMSGSIZE` for an oversized datagram…), to this task only.
 */
export function sendto(sock: Socket, buf: Uint8Array, addr: Address): B.Operation<number>;
export function sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address): B.Operation<number>;
export function sendto(sock: Socket, buf: Uint8Array, a: unknown, b?: unknown, c?: unknown): B.Operation<number> {
  const s = checkUdp(sock, "sendto()");
  const short = a !== null && typeof a === "object";
  const o = rangeStart(buf, short ? 0 : a, "sendto()");
  const l = rangeLength(buf, o, short ? undefined : b, "sendto()");
  const address = checkAddress(short ? a : c, s.kind, "sendto()", true) as InetAddress;
  return operationFrom(s.backend.sendto(s, buf, o, l, address), s.backend, "sendto");
}
