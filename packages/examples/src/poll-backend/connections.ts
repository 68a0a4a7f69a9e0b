/**
 * Opening and closing: `bindAndListen`, `accept`, `connect` and `close`.
 * Node binds, listens and connects asynchronously (it may resolve a name
 * first), so each is started, then waited for as a non-blocking `connect`
 * is on Unix: park until the socket is `writable`, which here means "the
 * bind or connect has an outcome".
 */

import * as net from "node:net";
import type * as B from "@bobbin/core";
import { type Address, type InetAddress, type ListenOptions, SocketClosed } from "@bobbin/unix";
import { checkTimeouts } from "@bobbin/unix/backend";
import type { PollSocket } from "./socket.js";

/** Parks until the bind or connect in progress has an outcome; throws its error, leaving the socket fresh. */
function* opened(sock: PollSocket, name: string): Generator<B.Instruction, void, unknown> {
  while (sock.opening) yield* sock.poller.wait(sock, "writable", name);
  if (sock.closed) throw new SocketClosed(`${name}()`);
  const error = sock.openError;
  if (error !== null) {
    sock.openError = null;
    throw error;
  }
}

/**
 * `bindAndListen`: a `net.Server` listening (TCP, Unix), or a bound `dgram`
 * socket (UDP).
 *
 * @example
 * ```ts
 * yield* bindAndListen(sock, { host: "127.0.0.1", port: 0 }, { backlog: 511, reuseAddr: true });
 * ```
 * @throws `EADDRINUSE`, `EACCES`, `ENOTFOUND`… (the socket stays fresh), SocketClosed, `Timeout`, `Cancelled`.
 */
export function* bindAndListen(sock: PollSocket, addr: Address, options: Required<ListenOptions>): Generator<B.Instruction, void, unknown> {
  checkTimeouts();
  if (sock.kind === "udp4" || sock.kind === "udp6") {
    sock.opening = true;
    sock.openError = null;
    const { host, port } = addr as InetAddress;
    sock.datagramSocket(options.reuseAddr).bind({ address: host, port });
  } else {
    // Node reads a backlog of 0 as "the default" (511): 1 is the closest.
    sock.listen(addr, Math.max(1, options.backlog));
  }
  yield* opened(sock, "bindAndListen");
}

/** The peer of an accepted connection (Unix peers are unnamed). */
function peerOf(client: PollSocket): Address {
  if (client.kind === "unix") return { path: "" };
  const stream = client.stream!;
  return { host: stream.remoteAddress ?? "", port: stream.remotePort ?? 0 };
}

/**
 * `accept`: a connection Node accepted, or the accept error it reported.
 *
 * @example
 * ```ts
 * const [client, peer] = yield* accept(sock);
 * ```
 * @throws `EMFILE`… (once per failure), SocketClosed, `Timeout`, `Cancelled`.
 */
export function* accept(sock: PollSocket): Generator<B.Instruction, [PollSocket, Address], unknown> {
  checkTimeouts();
  for (;;) {
    if (sock.closed) throw new SocketClosed("accept()");
    const client = sock.backlog.shift();
    if (client !== undefined) return [client, peerOf(client)];
    const error = sock.error;
    if (error !== null) {
      sock.error = null;
      throw error;
    }
    yield* sock.poller.wait(sock, "readable", "accept");
  }
}

/**
 * `connect`: a `net.Socket` connecting (names resolved with the socket's
 * own counted lookup); the socket is fresh again when it fails.
 *
 * @example
 * ```ts
 * yield* connect(sock, { host: "localhost", port: 3000 });
 * ```
 * @throws `ECONNREFUSED`, `ENOENT`, `ENOTFOUND`…, SocketClosed, `Timeout` (the socket stays `connecting`), `Cancelled`.
 */
export function* connect(sock: PollSocket, addr: Address): Generator<B.Instruction, void, unknown> {
  checkTimeouts();
  const stream = new net.Socket({ allowHalfOpen: true });
  sock.state = "connecting";
  sock.opening = true;
  sock.openError = null;
  sock.attachStream(stream);
  if ("path" in addr) stream.connect({ path: addr.path });
  else stream.connect({ host: addr.host, port: addr.port, family: sock.family, lookup: sock.lookup });
  yield* opened(sock, "connect");
}

/**
 * `close`: begins closing (the socket is `closed` at once), then parks until
 * every Node handle and lookup of the socket is gone.
 *
 * @example
 * ```ts
 * yield* close(sock);
 * ```
 * @throws `Timeout` (in an expired `withTimeout` scope: the socket is closing all the same), `Cancelled`.
 */
export function* close(sock: PollSocket): Generator<B.Instruction, void, unknown> {
  sock.closeNow();
  checkTimeouts();
  while (!sock.released) yield* sock.poller.wait(sock, "released", "close");
}
