/**
 * `OwnedSockets` (Miou_unix's `Ownership`): sockets as resources owned by one
 * task (`@bobbin/sync`'s `Resource<Socket>`). Each operation checks that the
 * current task owns the socket; the finaliser closes it when its owner fails,
 * is cancelled, or forgets it (then the run fails with `ResourceLeaked`).
 * Pass an owned socket to a child with `spawn({ give: [sock] }, fn, sock)`.
 */
import type * as B from "@bobbin/core";
import { Ownership as Owner, Resource } from "@bobbin/sync";
import type { Address, ListenOptions, ShutdownCommand, Socket } from "./contract.js";
import * as sockets from "./socket.js";
import * as tcp from "./tcp.js";
import * as udp from "./udp.js";

/**
 * A socket owned by a task: a `Resource<Socket>` of `@bobbin/sync`
 * (`.value` is the socket) whose finaliser closes it.
 *
 * @example
 * ```ts
 * const server: OwnedSocket = OwnedSockets.tcpv4();
 * B.spawn({ give: [server] }, serve, server);
 * ```
 */
export type OwnedSocket = Resource<Socket>;

const finalise = (s: Socket): void => s.backend.closeNow(s);

function owned(sock: Socket): OwnedSocket {
  const r = Owner.create(sock, finalise);
  Owner.own(r);
  return r;
}

function checked(o: unknown, what: string): Socket {
  if (!(o instanceof Resource)) {
    throw new TypeError(`OwnedSockets.${what} expects an owned socket made by OwnedSockets.tcpv4(), accept()… or OwnedSockets.ofSocket()`);
  }
  Owner.check(o);
  return (o as OwnedSocket).value;
}

function* acceptOwned(server: Socket): Generator<B.Instruction, [OwnedSocket, Address], unknown> {
  const [client, peer] = yield* tcp.accept(server);
  return [owned(client), peer];
}

function* closeOwned(o: OwnedSocket): Generator<B.Instruction, void, unknown> {
  Owner.release(o); // runs the finaliser: the socket starts closing, nobody owns it any more
  yield* sockets.close(o.value);
}

/**
 * Owned-socket versions of the socket operations (Miou_unix's
 * `Ownership`, named apart from `@bobbin/sync`'s `Ownership`, which it is
 * built on): the same arguments and results, with an {@link OwnedSocket}
 * in place of a socket. Every operation throws `NotOwner` (from
 * `@bobbin/core`) when the current task does not own the socket.
 *
 * @example
 * ```ts
 * function* echo(client: OwnedSocket) {
 *   const buf = Buffer.alloc(4096);
 *   for (let n; (n = yield* OwnedSockets.read(client, buf)) > 0; ) yield* OwnedSockets.write(client, buf, 0, n);
 *   yield* OwnedSockets.close(client);
 * }
 * const server = OwnedSockets.tcpv4();
 * yield* OwnedSockets.bindAndListen(server, { host: "127.0.0.1", port: 0 });
 * const bg = B.orphans<void>();
 * for (;;) {
 *   const [client] = yield* OwnedSockets.accept(server);
 *   B.spawn({ orphans: bg, give: [client] }, echo, client);
 * }
 * ```
 */
export const OwnedSockets = {
  /**
   * A new TCP/IPv4 socket owned by the current task.
   * @example
   * ```ts
   * const sock = OwnedSockets.tcpv4();
   * ```
   * @throws TypeError outside a task of `@bobbin/unix`'s `run`.
   */
  tcpv4(): OwnedSocket {
    return owned(tcp.tcpv4());
  },
  /**
   * A new TCP/IPv6 socket owned by the current task.
   * @example
   * ```ts
   * const sock = OwnedSockets.tcpv6();
   * ```
   * @throws TypeError outside a task of `@bobbin/unix`'s `run`.
   */
  tcpv6(): OwnedSocket {
    return owned(tcp.tcpv6());
  },
  /**
   * A new Unix stream socket owned by the current task.
   * @example
   * ```ts
   * const sock = OwnedSockets.unixSocket();
   * ```
   * @throws TypeError outside a task of `@bobbin/unix`'s `run`.
   */
  unixSocket(): OwnedSocket {
    return owned(tcp.unixSocket());
  },
  /**
   * A new UDP/IPv4 socket owned by the current task.
   * @example
   * ```ts
   * const sock = OwnedSockets.udpv4();
   * ```
   * @throws TypeError outside a task of `@bobbin/unix`'s `run`.
   */
  udpv4(): OwnedSocket {
    return owned(udp.udpv4());
  },
  /**
   * A new UDP/IPv6 socket owned by the current task.
   * @example
   * ```ts
   * const sock = OwnedSockets.udpv6();
   * ```
   * @throws TypeError outside a task of `@bobbin/unix`'s `run`.
   */
  udpv6(): OwnedSocket {
    return owned(udp.udpv6());
  },
  /**
   * Makes the current task the owner of an existing socket (Miou's `of_file_descr`).
   * @example
   * ```ts
   * const o = OwnedSockets.ofSocket(sock);
   * ```
   * @throws TypeError when `sock` is not a socket.
   */
  ofSocket(sock: Socket): OwnedSocket {
    return owned(sockets.checkSocket(sock, "OwnedSockets.ofSocket()"));
  },
  /**
   * `bindAndListen` on an owned socket.
   * @example
   * ```ts
   * yield* OwnedSockets.bindAndListen(server, { host: "127.0.0.1", port: 0 });
   * ```
   * @throws NotOwner, and whatever `bindAndListen` throws.
   */
  bindAndListen(o: OwnedSocket, addr: Address, options?: ListenOptions): B.Operation<void> {
    return tcp.bindAndListen(checked(o, "bindAndListen()"), addr, options);
  },
  /**
   * `accept` on an owned listener; the client is owned by the current task.
   * @example
   * ```ts
   * const [client, peer] = yield* OwnedSockets.accept(server);
   * ```
   * @throws NotOwner, and whatever `accept` throws.
   */
  accept(o: OwnedSocket): B.Operation<[OwnedSocket, Address]> {
    return acceptOwned(checked(o, "accept()"));
  },
  /**
   * `connect` on an owned socket.
   * @example
   * ```ts
   * yield* OwnedSockets.connect(sock, { host: "127.0.0.1", port });
   * ```
   * @throws NotOwner, and whatever `connect` throws.
   */
  connect(o: OwnedSocket, addr: Address): B.Operation<void> {
    return tcp.connect(checked(o, "connect()"), addr);
  },
  /**
   * `read` on an owned socket.
   * @example
   * ```ts
   * const n = yield* OwnedSockets.read(client, buf);
   * ```
   * @throws NotOwner, and whatever `read` throws.
   */
  read(o: OwnedSocket, buf: Uint8Array, off?: number, len?: number): B.Operation<number> {
    return sockets.read(checked(o, "read()"), buf, off, len);
  },
  /**
   * `readExactly` on an owned socket.
   * @example
   * ```ts
   * yield* OwnedSockets.readExactly(client, header);
   * ```
   * @throws NotOwner, and whatever `readExactly` throws.
   */
  readExactly(o: OwnedSocket, buf: Uint8Array, off?: number, len?: number): B.Operation<void> {
    return sockets.readExactly(checked(o, "readExactly()"), buf, off, len);
  },
  /**
   * `write` on an owned socket.
   * @example
   * ```ts
   * yield* OwnedSockets.write(client, buf, 0, n);
   * ```
   * @throws NotOwner, and whatever `write` throws.
   */
  write(o: OwnedSocket, buf: Uint8Array | string, off?: number, len?: number): B.Operation<void> {
    return sockets.write(checked(o, "write()"), buf, off, len);
  },
  /**
   * `recvfrom` on an owned UDP socket.
   * @example
   * ```ts
   * const [n, from] = yield* OwnedSockets.recvfrom(sock, buf);
   * ```
   * @throws NotOwner, and whatever `recvfrom` throws.
   */
  recvfrom(o: OwnedSocket, buf: Uint8Array, off?: number, len?: number): B.Operation<[number, Address]> {
    return udp.recvfrom(checked(o, "recvfrom()"), buf, off, len);
  },
  /**
   * `sendto` on an owned UDP socket.
   * @example
   * ```ts
   * yield* OwnedSockets.sendto(sock, buf, 0, n, from);
   * ```
   * @throws NotOwner, and whatever `sendto` throws.
   */
  sendto(o: OwnedSocket, buf: Uint8Array, ...rest: [Address] | [number, number, Address]): B.Operation<number> {
    const s = checked(o, "sendto()");
    return rest.length === 1 ? udp.sendto(s, buf, rest[0]) : udp.sendto(s, buf, rest[0], rest[1], rest[2]);
  },
  /**
   * `shutdown` on an owned socket.
   * @example
   * ```ts
   * OwnedSockets.shutdown(sock, "send");
   * ```
   * @throws NotOwner, and whatever `shutdown` throws.
   */
  shutdown(o: OwnedSocket, how?: ShutdownCommand): void {
    sockets.shutdown(checked(o, "shutdown()"), how);
  },
  /**
   * `getsockname` of an owned socket.
   * @example
   * ```ts
   * const { port } = OwnedSockets.getsockname(server) as InetAddress;
   * ```
   * @throws NotOwner, and whatever `getsockname` throws.
   */
  getsockname(o: OwnedSocket): Address {
    return sockets.getsockname(checked(o, "getsockname()"));
  },
  /**
   * Releases the socket (its finaliser starts closing it; nobody owns it
   * any more) and waits until it is closed, as `close`.
   * @example
   * ```ts
   * yield* OwnedSockets.close(client);
   * ```
   * @throws NotOwner when the current task does not own it.
   */
  close(o: OwnedSocket): B.Operation<void> {
    checked(o, "close()");
    return closeOwned(o);
  },
};
