/**
 * The poll backend: a backend of `@bobbin/unix` over Node's `net` and `dgram`, written from the kit
 * (`@bobbin/unix/backend`) — the tutorial of "How to write a backend" in `@bobbin/unix`'s README.
 * This module only defines things: worker domains import it to make their own (`defineBackend`).
 */
import * as net from "node:net";
import type * as B from "@bobbin/core";
import type { ShutdownCommand, SocketKind } from "@bobbin/unix";
import { type Address, type Backend, defineBackend, type InetAddress, type ListenSettings, type Socket } from "@bobbin/unix";
import {
  AdoptedServer,
  AGAIN,
  CloseOp,
  DatagramRecvOp,
  DatagramSendOp,
  describeListener,
  NodeBackend,
  NodeServer,
  NodeWriteOp,
  OpenOp,
  PollOp,
  type SharedSocket,
} from "@bobbin/unix/backend";
import { PollSocket } from "./socket.js";

/**
 * The poll backend. `@bobbin/unix` checks the arguments and the socket's state before calling it.
 * @example
 * ```ts
 * await run(main, { backend: pollBackend });
 * ```
 * @throws never itself; its operations throw Node's system errors (with `code`) and `SocketClosed`.
 */
export class PollBackend extends NodeBackend implements Backend {
  readonly name = "poll";

  socket(kind: SocketKind): Socket {
    return new PollSocket(kind, this, this.live);
  }

  bindAndListen(sock: Socket, addr: Address, { backlog, reuseAddr }: ListenSettings): B.Operation<void> {
    const s = sock as PollSocket;
    if (s.kind === "udp4" || s.kind === "udp6") {
      const { host: address, port } = addr as InetAddress;
      const bind = (): void => void s.datagram(reuseAddr).udp.bind({ address, port });
      return new OpenOp(s, "bindAndListen", bind, () => s.state === "bound");
    }
    const listen = (): void => {
      s.server = new NodeServer(s, { connection: (stream) => s.connection(stream), acceptFailed: (e) => s.acceptFailed(e) });
      s.server.listen(addr, Math.max(1, backlog)); // Node reads a backlog of 0 as its default, 511: 1 is the closest
    };
    const dropped = (): void => void (s.server = null); // a failed listen: the socket is fresh again
    return new OpenOp(s, "bindAndListen", listen, () => s.state === "listening", dropped);
  }

  accept(sock: Socket): B.Operation<[Socket, Address]> {
    const s = sock as PollSocket;
    s.relay?.want(); // a listener from another domain takes connections from its first accept on
    return new PollOp(s, s.waiters, "accept", () => {
      const client = s.backlog.shift();
      if (client === undefined) return s.error === null ? AGAIN : s.throwError();
      client.stream!.resume(); // accepted with pauseOnConnect: reading starts now
      const { remoteAddress: host = "", remotePort: port = 0 } = client.stream!;
      return [client, s.kind === "unix" ? { path: "" } : { host, port }];
    });
  }

  connect(sock: Socket, addr: Address): B.Operation<void> {
    const s = sock as PollSocket;
    const begin = (): void => {
      const stream = new net.Socket({ allowHalfOpen: true });
      s.state = "connecting";
      s.attach(stream);
      if ("path" in addr) stream.connect({ path: addr.path });
      else if (net.isIP(addr.host) !== 0) stream.connect({ host: addr.host, port: addr.port });
      else s.lookup(addr.host, (error, ip) => (error ? stream.destroy(error) : stream.connect({ host: ip, port: addr.port })));
    };
    return new OpenOp(s, "connect", begin, () => s.state === "connected");
  }

  read(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<number> {
    const s = sock as PollSocket;
    return new PollOp(s, s.waiters, "read", () => s.take(buf, off, len));
  }

  write(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<void> {
    return new NodeWriteOp(sock as PollSocket).init(buf, off, len); // done once Node wrote the bytes
  }

  recvfrom(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<[number, Address]> {
    const s = sock as PollSocket;
    return new DatagramRecvOp(s, s.udp!).init(buf, off, len);
  }

  sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address): B.Operation<number> {
    const s = sock as PollSocket;
    return new DatagramSendOp(s, () => s.datagram(true), buf, off, len, addr as InetAddress);
  }

  shutdown(sock: Socket, how: ShutdownCommand): void {
    const s = sock as PollSocket;
    if (how !== "receive" && !s.sendShut) s.stream!.end();
    s.sendShut ||= how !== "receive";
    s.readShut ||= how !== "send";
    s.changed();
  }

  close(sock: Socket): B.Operation<void> {
    return new CloseOp(sock as PollSocket); // closeNow, then waits until the socket holds nothing of Node's
  }

  closeNow(sock: Socket): void {
    (sock as PollSocket).closeNow();
  }

  localAddress(sock: Socket): Address {
    const s = sock as PollSocket;
    if (s.udp !== null) return s.udp.address();
    if (s.stream === null) return s.server?.address() ?? s.relay!.shared.address;
    return s.kind === "unix" ? { path: "" } : { host: s.stream.localAddress!, port: s.stream.localPort! };
  }

  /** Describes a listening socket for another domain: its descriptor is its `net.Server`'s. */
  share(sock: Socket): SharedSocket {
    const s = sock as PollSocket;
    const fd = s.relay?.fd ?? s.server!.fd;
    if (s.relay !== null && fd < 0) return s.relay.shared; // its own descriptor not here yet: pass the original on
    return describeListener(s, fd, this.localAddress(s), 511);
  }

  /** A listener over another domain's listening socket, its descriptor brought by a relay process. */
  adopt(shared: SharedSocket): Socket {
    const s = new PollSocket(shared.kind, this, this.live);
    const hooks = { serve: (server: net.Server) => server.on("connection", (c: net.Socket) => s.connection(c)) };
    s.relay = new AdoptedServer(shared, s, { ...hooks, acceptFailed: (e) => s.acceptFailed(e), broken: (e) => s.acceptFailed(e) });
    s.state = s.relay.sealed ? "closed" : "listening";
    return s;
  }
}

/**
 * The poll backend's factory, defined with `defineBackend` so that worker domains make their own.
 * @example
 * ```ts
 * await run(main, { backend: pollBackend });
 * ```
 * @throws never.
 */
export const pollBackend: (domain: number) => PollBackend = defineBackend(import.meta.url, "poll", () => new PollBackend());
