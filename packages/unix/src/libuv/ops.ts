/**
 * The libuv backend's operations that are its own, each a `Parked`
 * iterator (reads, writes, opening and closing are the kit's: `ReadOp`,
 * `NodeWriteOp`, `OpenOp`, `CloseOp`).
 */
import * as net from "node:net";
import { NodeDatagram } from "../backend/node-datagram.js";
import { OpenOp } from "../backend/node-socket.js";
import { Parked } from "../backend/parked.js";
import type { Address, InetAddress, ListenSettings } from "../contract.js";
import { SocketClosed } from "../errors.js";
import { type KeptAccept, UvListener } from "./listener.js";
import type { UvSocket } from "./socket.js";

/** What Node's TCP handle tells of its peer. */
type PeerHandle = { getpeername?(out: { address?: string; port?: number }): number };

/** Where the handle writes its peer's address; read at once, so one serves every accept. */
const peerOut: { address?: string; port?: number } = {};

/**
 * The peer of an accepted connection (Unix peers are unnamed). Asked of the
 * handle: `remoteAddress` would keep Node's answer on the socket for its
 * life (an object and a string per connection, held by every idle one).
 */
function peerOf(client: UvSocket): Address {
  if (client.kind === "unix") return { path: "" };
  const stream = client.stream!;
  const handle = (stream as unknown as { _handle?: PeerHandle | null })._handle;
  if (handle?.getpeername?.(peerOut) === 0) return { host: peerOut.address ?? "", port: peerOut.port ?? 0 };
  return { host: stream.remoteAddress ?? "", port: stream.remotePort ?? 0 };
}

/** `accept(sock)`: a connection Node accepted (reading from now on), or the accept error (EMFILE…). */
export class AcceptOp extends Parked<[UvSocket, Address]> {
  constructor(private readonly sock: UvSocket) {
    super("accept");
  }

  /** Claims it for one call. */
  begin(): this {
    return this.claim();
  }

  /** "accept tcp4 127.0.0.1:3000 (listening)" (a dump). */
  override describe(): string {
    return `${super.describe()} ${this.sock.where()}`;
  }

  protected attempt(): boolean {
    if (this.sock.state === "closed") throw new SocketClosed("accept()");
    const client = this.sock.listener!.take();
    if (client === undefined) return false;
    client.startReading();
    this.value = [client, peerOf(client)];
    return true;
  }

  protected wait(): void {
    this.sock.listener!.acceptors.add(this);
  }

  protected leave(): void {
    this.sock.listener!.acceptors.leave(this);
  }
}

/** `accept`: the listener's kept operation while it is idle, else a new one. */
export function acceptOp(s: UvSocket): KeptAccept<UvSocket> {
  const listener = s.listener;
  if (listener === null) return new AcceptOp(s).begin();
  let op = (listener.acceptOp ??= new AcceptOp(s));
  if (op.busy) op = new AcceptOp(s); // another task accepts on the socket
  return op.begin();
}

/** `bindAndListen`: a `net.Server` (TCP/Unix) listening, or a bound `dgram` socket. */
export function listenOp(s: UvSocket, addr: Address, options: ListenSettings): OpenOp {
  if (s.kind === "udp4" || s.kind === "udp6") {
    const { host, port } = addr as InetAddress;
    const bind = (): void => void datagramOf(s, options.reuseAddr).udp.bind({ address: host, port });
    return new OpenOp(s, "bindAndListen", bind, () => s.state === "bound");
  }
  // Node reads a backlog of 0 as "the default, 511": 1 is the closest.
  const listen = (): void => listenerOf(s).listen(addr, Math.max(1, options.backlog));
  return new OpenOp(
    s,
    "bindAndListen",
    listen,
    () => s.state === "listening",
    () => (s.listener = null),
  );
}

/** Makes `s` a listener (not listening yet), whose clients are sockets of the same backend. */
export function listenerOf(s: UvSocket): UvListener<UvSocket> {
  s.listener = new UvListener(s, (stream: net.Socket) => {
    const client = s.backend.socket(s.kind) as UvSocket;
    client.state = "connected";
    client.connectTo(stream);
    return client;
  });
  return s.listener;
}

/** The socket's `dgram` socket, made at its first bind or send. */
export function datagramOf(s: UvSocket, reuseAddr: boolean): NodeDatagram {
  s.datagram ??= new NodeDatagram(s, reuseAddr, () => {
    s.datagram = null;
  });
  return s.datagram;
}

/** `connect`: a `net.Socket` connecting; the socket is fresh again if it fails. */
export function connectOp(s: UvSocket, addr: Address): OpenOp {
  const begin = (): void => {
    const stream = new net.Socket({ allowHalfOpen: true });
    s.state = "connecting";
    s.connectTo(stream);
    stream.once("connect", () => {
      if (s.stream !== stream || s.state !== "connecting") return;
      s.state = "connected";
      s.opened();
    });
    if ("path" in addr) return void stream.connect({ path: addr.path });
    const { host, port } = addr;
    if (net.isIP(host) !== 0) return void stream.connect({ host, port });
    s.lookup(host, (error, ip) => {
      if (s.stream !== stream || s.state !== "connecting") return;
      if (error)
        stream.destroy(error); // as a failed connect: "error", then "close"
      else stream.connect({ host: ip, port });
    });
  };
  return new OpenOp(
    s,
    "connect",
    begin,
    () => s.state === "connected",
    () => s.dropStream(),
  );
}
