/** What the kinds of sockets are: streams or datagrams. */
import type { SocketKind } from "./contract.js";

/**
 * Whether sockets of `kind` are streams (TCP and Unix sockets, and sockets over Node streams), as opposed to datagrams (UDP).
 *
 * @example
 * ```ts
 * if (!isStreamKind(sock.kind)) throw new TypeError("accept needs a stream socket");
 * ```
 * @throws never.
 */
export function isStreamKind(kind: SocketKind): boolean {
  return kind === "tcp4" || kind === "tcp6" || kind === "unix" || kind === "stream";
}

/** @internal Whether sockets of `kind` are UDP sockets. */
export function isUdpKind(kind: SocketKind): boolean {
  return kind === "udp4" || kind === "udp6";
}
