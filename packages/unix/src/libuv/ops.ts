/**
 * The libuv backend's operations that are its own, each a `Parked`
 * iterator (reads, writes and closes are the kit's: `ReadOp`, `NodeWriteOp`,
 * `CloseOp`).
 */
import * as net from "node:net";
import { Parked } from "../backend/parked.js";
import type { Address, InetAddress, ListenOptions } from "../contract.js";
import { SocketClosed } from "../errors.js";
import { UvDatagram } from "./datagram.js";
import { UvListener } from "./listener.js";
import { UvSocket } from "./socket.js";
import { UvStream } from "./stream.js";

/** An operation on one socket: a dump names it ("accept tcp4 127.0.0.1:3000 (listening)"). */
abstract class SocketOp<T> extends Parked<T> {
  constructor(
    protected readonly sock: UvSocket,
    /** The operation's name, for its errors. */
    protected readonly name: string,
  ) {
    super(name);
  }

  override describe(): string {
    return `${super.describe()} ${this.sock.describe()}`;
  }
}

/** The peer of an accepted connection (Unix peers are unnamed). */
function peerOf(client: UvSocket): Address {
  if (client.kind === "unix") return { path: "" };
  const stream = client.stream!.stream;
  return { host: stream.remoteAddress ?? "", port: stream.remotePort ?? 0 };
}

/** `accept(sock)`: a connection Node accepted (reading from now on), or the accept error (EMFILE…). */
export class AcceptOp extends SocketOp<[UvSocket, Address]> {
  constructor(sock: UvSocket) {
    super(sock, "accept");
  }

  protected attempt(): boolean {
    if (this.sock.state === "closed") throw new SocketClosed("accept()");
    const client = this.sock.listener!.take();
    if (client === undefined) return false;
    client.stream!.start();
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

/**
 * Opening operations (bind and listen, connect): Node does them in
 * callbacks, so each starts once and then waits as the socket's `opener`.
 * A failure is thrown once the socket holds nothing any more (it is fresh
 * again then).
 */
abstract class OpenOp extends SocketOp<void> {
  #started = false;

  /** Starts opening (once). */
  protected abstract begin(): void;
  /** Whether the socket is open now. */
  protected abstract opened(): boolean;
  /** The failure is thrown: the role that failed is dropped. */
  protected abstract failed(): void;

  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") {
      if (s.opener === this) s.opener = null;
      throw new SocketClosed(`${this.name}()`);
    }
    if (!this.#started) {
      this.#started = true;
      s.opener = this;
      s.openError = null;
      this.begin();
    }
    if (this.opened()) {
      if (s.opener === this) s.opener = null;
      return true;
    }
    const error = s.openError;
    if (error !== null && s.state === "fresh" && s.released) {
      s.openError = null;
      if (s.opener === this) s.opener = null;
      this.failed();
      throw error;
    }
    return false;
  }

  protected wait(): void {}

  protected leave(): void {
    if (this.sock.opener === this) this.sock.opener = null;
  }
}

/** `bindAndListen`: a `net.Server` (TCP/Unix) listening, or a bound `dgram` socket. */
export class ListenOp extends OpenOp {
  constructor(
    sock: UvSocket,
    private readonly addr: Address,
    private readonly options: Required<ListenOptions>,
  ) {
    super(sock, "bindAndListen");
  }

  protected opened(): boolean {
    const state = this.sock.state;
    return state === "listening" || state === "bound";
  }

  protected begin(): void {
    const s = this.sock;
    if (s.kind === "udp4" || s.kind === "udp6") {
      const { host, port } = this.addr as InetAddress;
      datagramOf(s, this.options.reuseAddr).udp.bind({ address: host, port });
      return;
    }
    // Node reads a backlog of 0 as "the default, 511": 1 is the closest.
    listenerOf(s).listen(this.addr, Math.max(1, this.options.backlog));
  }

  protected failed(): void {
    this.sock.listener = null;
  }
}

/** Makes `s` a listener (not listening yet), whose clients are sockets of the same backend. */
export function listenerOf(s: UvSocket): UvListener<UvSocket> {
  s.listener = new UvListener(s, (stream: net.Socket) => {
    const client = new UvSocket(s.kind, s.backend, s.live);
    client.state = "connected";
    client.stream = new UvStream(client, stream);
    return client;
  });
  return s.listener;
}

/** The socket's `dgram` socket, made at its first bind or send. */
export function datagramOf(s: UvSocket, reuseAddr: boolean): UvDatagram {
  s.datagram ??= new UvDatagram(s, reuseAddr, () => {
    s.datagram = null;
  });
  return s.datagram;
}

/** `connect`: a `net.Socket` connecting; the socket is fresh again if it fails. */
export class ConnectOp extends OpenOp {
  constructor(
    sock: UvSocket,
    private readonly addr: Address,
  ) {
    super(sock, "connect");
  }

  protected opened(): boolean {
    return this.sock.state === "connected";
  }

  protected begin(): void {
    const s = this.sock;
    const stream = new net.Socket({ allowHalfOpen: true });
    s.state = "connecting";
    const connection = new UvStream(s, stream);
    s.stream = connection;
    stream.once("connect", () => {
      if (s.stream !== connection || s.state !== "connecting") return;
      s.state = "connected";
      s.opened();
    });
    if ("path" in this.addr) return void stream.connect({ path: this.addr.path });
    const { host, port } = this.addr;
    if (net.isIP(host) !== 0) return void stream.connect({ host, port });
    s.lookup(host, (error, ip) => {
      if (s.stream !== connection || s.state !== "connecting") return;
      if (error)
        stream.destroy(error); // as a failed connect: "error", then "close"
      else stream.connect({ host: ip, port });
    });
  }

  protected failed(): void {
    this.sock.stream = null;
  }
}

/** `recvfrom`: one queued datagram, truncated to the buffer. */
export class RecvOp extends SocketOp<[number, Address]> {
  constructor(
    sock: UvSocket,
    private readonly buf: Uint8Array,
    private readonly off: number,
    private readonly len: number,
  ) {
    super(sock, "recvfrom");
  }

  protected attempt(): boolean {
    if (this.sock.state === "closed") throw new SocketClosed("recvfrom()");
    const d = this.sock.datagram!.take();
    if (d === undefined) return false;
    const n = Math.min(this.len, d.msg.length);
    this.buf.set(n === d.msg.length ? d.msg : d.msg.subarray(0, n), this.off);
    this.value = [n, d.from];
    return true;
  }

  protected wait(): void {
    this.sock.datagram!.receivers.add(this);
  }

  protected leave(): void {
    this.sock.datagram!.receivers.leave(this);
  }
}

/**
 * `sendto`: one datagram; done when Node's send callback says so. It waits
 * among the socket's senders, so that closing the socket wakes it (Node may
 * never call back for a datagram of a closed socket).
 */
export class SendOp extends SocketOp<number> {
  #started = false;
  #sent = false;
  #error: Error | null = null;
  #datagram: UvDatagram | null = null;
  readonly #onSent = (error: Error | null): void => {
    this.#sent = true;
    this.#error = error;
    if (this.#datagram!.senders.leave(this)) this.ready();
  };

  constructor(
    sock: UvSocket,
    private readonly buf: Uint8Array,
    private readonly off: number,
    private readonly len: number,
    private readonly addr: InetAddress,
  ) {
    super(sock, "sendto");
  }

  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") throw new SocketClosed("sendto()");
    if (!this.#started) {
      this.#started = true;
      const datagram = datagramOf(s, true);
      this.#datagram = datagram;
      const { host } = this.addr;
      if (net.isIP(host) !== 0) this.#send(host);
      else
        s.lookup(host, (error, ip) => {
          if (error) this.#onSent(error);
          else if (s.state !== "closed") this.#send(ip);
        });
      return false;
    }
    if (!this.#sent) return false;
    if (this.#error !== null) throw this.#error;
    this.value = this.len;
    return true;
  }

  #send(ip: string): void {
    const s = this.sock;
    if (s.state === "fresh") s.state = "bound"; // Node binds on the first send
    this.#datagram!.udp.send(this.buf, this.off, this.len, this.addr.port, ip, this.#onSent);
  }

  protected wait(): void {
    if (this.#sent) this.ready();
    else this.#datagram!.senders.add(this);
  }

  protected leave(): void {
    this.#datagram!.senders.leave(this);
  }
}
