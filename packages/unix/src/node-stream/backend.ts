/**
 * What the operations of `@bobbin/unix` call for a socket over a Node
 * stream: `read`, `write`, `shutdown`, `close`, `getsockname` (the rest of
 * the socket contract never reaches it: such a socket is connected from the
 * start and is not UDP, which `@bobbin/unix` checks first).
 */
import * as net from "node:net";
import type * as B from "@bobbin/core";
import { CloseOp } from "../backend/node-socket.js";
import { NodeWriteOp } from "../backend/node-writes.js";
import type { Address, ShutdownCommand, Socket, SocketBackend } from "../contract.js";
import { StreamRead } from "./ops.js";
import type { StreamSocket } from "./socket.js";

const connectedFromTheStart = (): never => {
  throw new TypeError(
    "a socket over a Node stream is connected from the start: it does not bind, listen, accept, connect or use datagrams",
  );
};

/** @internal The socket operations of every socket over a Node stream. */
class NodeStreamBackend implements SocketBackend {
  readonly name = "node-stream";

  read(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<number> {
    const s = sock as StreamSocket;
    if (!s.readableSide) throw new TypeError("read() needs a readable stream: this socket adapts a Writable (it has no read())");
    return new StreamRead(s).init(buf, off, len);
  }

  write(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<void> {
    const s = sock as StreamSocket;
    if (!s.writableSide) throw new TypeError("write() needs a writable stream: this socket adapts a Readable (it has no write())");
    return new NodeWriteOp(s).init(buf, off, len);
  }

  shutdown(sock: Socket, how: ShutdownCommand): void {
    (sock as StreamSocket).shutdown(how);
  }

  close(sock: Socket): B.Operation<void> {
    return new CloseOp(sock as StreamSocket);
  }

  closeNow(sock: Socket): void {
    (sock as StreamSocket).closeNow();
  }

  localAddress(sock: Socket): Address {
    const stream = (sock as StreamSocket).nodeStream;
    const a: Partial<net.AddressInfo> = stream instanceof net.Socket ? stream.address() : {};
    if (a.address !== undefined && a.port !== undefined) return { host: a.address, port: a.port };
    throw new TypeError(
      "getsockname(): this socket adapts a Node stream with no address of its own (only a connected net.Socket or tls.TLSSocket has one)",
    );
  }

  bindAndListen = connectedFromTheStart;
  accept = connectedFromTheStart;
  connect = connectedFromTheStart;
  recvfrom = connectedFromTheStart;
  sendto = connectedFromTheStart;
}

/** @internal */
export const nodeStreams: SocketBackend = new NodeStreamBackend();
