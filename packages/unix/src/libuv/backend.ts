/**
 * The default backend: Node's own libuv through `net`, `dgram` and one
 * timer. Works everywhere Node does; in every domain of a run. This file
 * holds the contract's entry points; a socket's behaviour is its record's
 * (`socket.ts`, which queues a stream's bytes) and its role's (`stream.ts`,
 * `listener.ts`, the kit's `NodeDatagram`), the waits are `ops.ts`'s.
 */
import type * as B from "@bobbin/core";
import { NodeBackend } from "../backend/node-backend.js";
import { DatagramRecvOp, DatagramSendOp } from "../backend/node-datagram.js";
import { CloseOp } from "../backend/node-socket.js";
import { describeListener } from "../backend/sharing.js";
import type {
  Address,
  Backend,
  Chunk,
  InetAddress,
  ListenSettings,
  SharedSocket,
  ShutdownCommand,
  Socket,
  SocketKind,
} from "../contract.js";
import { acceptOp, connectOp, datagramOf, listenerOf, listenOp } from "./ops.js";
import type { LibuvOptions } from "./options.js";
import { UvSocket } from "./socket.js";

/**
 * The libuv backend. Make one per run with {@link libuv}.
 *
 * @example
 * ```ts
 * await run(main, { backend: libuv });
 * ```
 * @throws never itself; its operations throw Node's system errors (with `code`) and `SocketClosed`.
 */
export class LibuvBackend extends NodeBackend implements Backend {
  readonly name = "libuv";

  constructor(options: LibuvOptions = {}) {
    super(options.flush ?? "immediate");
  }

  socket(kind: SocketKind): Socket {
    return new UvSocket(kind, this);
  }

  bindAndListen(sock: Socket, addr: Address, options: ListenSettings): B.Operation<void> {
    return listenOp(sock as UvSocket, addr, options);
  }

  accept(sock: Socket): B.Operation<[Socket, Address]> {
    return acceptOp(sock as UvSocket);
  }

  connect(sock: Socket, addr: Address): B.Operation<void> {
    return connectOp(sock as UvSocket, addr);
  }

  read(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<number> {
    return (sock as UvSocket).readOp(buf, off, len);
  }

  /** Node's chunks, lent as its `'data'` events gave them. */
  readChunk(sock: Socket): B.Operation<Chunk | null> {
    return (sock as UvSocket).readChunk();
  }

  write(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<void> {
    const s = sock as UvSocket;
    return s.writes.writeOp(s, buf, off, len);
  }

  recvfrom(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<[number, Address]> {
    const s = sock as UvSocket;
    return new DatagramRecvOp(s, s.datagram!).init(buf, off, len);
  }

  sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address): B.Operation<number> {
    const s = sock as UvSocket;
    return new DatagramSendOp(s, () => datagramOf(s, true), buf, off, len, addr as InetAddress);
  }

  shutdown(sock: Socket, how: ShutdownCommand): void {
    (sock as UvSocket).shutdown(how);
  }

  close(sock: Socket): B.Operation<void> {
    return new CloseOp(sock as UvSocket);
  }

  closeNow(sock: Socket): void {
    (sock as UvSocket).closeNow();
  }

  localAddress(sock: Socket): Address {
    const s = sock as UvSocket;
    if (s.listener !== null) return s.listener.address();
    if (s.datagram !== null) return s.datagram.address();
    const a = s.stream?.address();
    if (s.kind === "unix") return { path: "" };
    if (a != null && "port" in a) return { host: a.address, port: a.port };
    throw new TypeError(`localAddress(): the ${s.kind} socket is not bound yet`);
  }

  /**
   * Describes a listening socket for another domain: its descriptor is the
   * `net.Server`'s (an adopted listener whose own has not arrived yet passes
   * on its origin's description).
   */
  share(sock: Socket): SharedSocket {
    const listener = (sock as UvSocket).listener!;
    const fd = listener.fd;
    if (fd >= 0) return describeListener(listener, fd, listener.address(), listener.listenBacklog);
    if (listener.adopted !== null) return listener.adopted.shared;
    throw new TypeError(
      `this ${sock.kind} listener cannot be given to another domain: Node gives no file descriptor for it on this platform (${process.platform})`,
    );
  }

  /**
   * A listener over another domain's listening socket: `listening` at once,
   * accepting once its own descriptor arrived (see the kit's `AdoptedServer`).
   */
  adopt(shared: SharedSocket): Socket {
    const s = new UvSocket(shared.kind, this);
    listenerOf(s).adopt(shared);
    return s;
  }
}
