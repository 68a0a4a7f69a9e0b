/**
 * The libuv backend's operations, each a `Parked` iterator: no generator,
 * Promise or closure per call on the read/write path.
 */
import * as dgram from "node:dgram";
import * as net from "node:net";
import type { Address, InetAddress, ListenOptions, UnixAddress } from "../backend.js";
import { BufferOp } from "../buffer-op.js";
import { SocketClosed, systemError } from "../errors.js";
import { Parked, removeWaiter } from "../parked.js";
import { SocketFile } from "../socket-file.js";
import type { UvSocket, Waiter, WriteWaiter } from "./socket.js";

/**
 * An operation that waits in one of its socket's queues of waiters (readers,
 * acceptors, receivers, closers): `wait` joins the queue, `unwait` leaves it.
 */
abstract class QueuedOp<T> extends Parked<T> {
  constructor(
    protected readonly sock: UvSocket,
    label: string,
    private readonly queue: Waiter[],
  ) {
    super(label);
  }

  protected wait(): void {
    this.queue.push(this);
  }

  protected unwait(): void {
    removeWaiter(this.queue, this);
  }

  /** "read tcp4 127.0.0.1:3000 ← 127.0.0.1:51234" (a dump). */
  override describe(): string {
    return `${super.describe()} ${this.sock.describeEnds()}`;
  }
}

/**
 * `read(sock, buf, off, len)`: queued bytes, 0 at the end of the stream.
 * Each socket keeps one read operation to reuse while it is idle.
 */
export class ReadOp extends BufferOp<number> {
  constructor(private readonly sock: UvSocket) {
    super("read");
  }

  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") throw new SocketClosed("read()");
    const n = s.take(this.buf, this.off, this.len);
    if (n < 0) return false;
    this.value = n;
    return true;
  }

  protected wait(): void {
    this.sock.readers.push(this);
  }

  protected unwait(): void {
    removeWaiter(this.sock.readers, this);
  }

  override describe(): string {
    return `${super.describe()} ${this.sock.describeEnds()}`;
  }
}

/**
 * `write(sock, buf, off, len)`: hands the bytes to Node; done at once when
 * libuv wrote them synchronously (the usual case), otherwise when Node's
 * write callback says so (only then may `buf` be reused). Each socket keeps
 * one write operation to reuse while it is idle.
 */
export class WriteOp extends BufferOp<void> implements WriteWaiter {
  seq = 0;

  constructor(private readonly sock: UvSocket) {
    super("write");
  }

  override describe(): string {
    return `${super.describe()} ${this.sock.describeEnds()}`;
  }

  override init(buf: Uint8Array, off: number, len: number): this {
    this.seq = 0;
    return super.init(buf, off, len);
  }

  protected attempt(): boolean {
    const s = this.sock;
    if (this.seq === 0) {
      if (s.state === "closed") throw new SocketClosed("write()");
      if (s.error !== null) throw s.error;
      if (s.sendShut) throw systemError("EPIPE", "write", "the socket was shut down for sending");
      const stream = s.stream!;
      if (stream.destroyed) throw systemError("EPIPE", "write", "the connection is closed");
      const buf = this.buf;
      const view = this.off === 0 && this.len === buf.length ? buf : buf.subarray(this.off, this.off + this.len);
      this.seq = ++s.writeSeq;
      stream.write(view, s.onWritten);
      if (stream.writableLength === 0) {
        // Written synchronously (or failed synchronously: EPIPE, ECONNRESET).
        const error = stream.errored;
        if (error) throw error;
        return true;
      }
      return false;
    }
    if (s.doneSeq < this.seq) return false;
    if (s.writeError !== null && s.writeErrorSeq >= this.seq) {
      if (s.state === "closed") throw new SocketClosed("write()");
      throw s.error ?? s.writeError;
    }
    return true;
  }

  protected wait(): void {
    if (this.sock.doneSeq >= this.seq) this.ready();
    else this.sock.writers.push(this);
  }

  protected unwait(): void {
    removeWaiter(this.sock.writers, this);
  }
}

function peerOf(client: UvSocket): Address {
  if (client.kind === "unix") return { path: "" };
  const stream = client.stream!;
  return { host: stream.remoteAddress ?? "", port: stream.remotePort ?? 0 };
}

/** `accept(sock)`: a connection Node accepted, or the accept error (EMFILE…). */
export class AcceptOp extends QueuedOp<[UvSocket, Address]> {
  constructor(sock: UvSocket) {
    super(sock, "accept", sock.acceptors);
  }

  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") throw new SocketClosed("accept()");
    if (s.origin !== null) s.wantConnections();
    const client = s.takeConnection();
    if (client !== undefined) {
      this.value = [client, peerOf(client)];
      s.wakeAcceptor();
      return true;
    }
    const error = s.acceptError;
    if (error !== null) {
      s.acceptError = null;
      throw error;
    }
    if (s.broken !== null) throw s.broken;
    return false;
  }
}

/** Opening operations: the socket's `opener` while in progress. */
abstract class OpenOp extends Parked<void> {
  protected started = false;

  constructor(
    protected readonly sock: UvSocket,
    label: string,
  ) {
    super(label);
  }

  override describe(): string {
    return `${super.describe()} ${this.sock.describeEnds()}`;
  }

  /** Starts opening (once): bind and listen, or connect. */
  protected abstract begin(): void;
  protected abstract opened(): boolean;

  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") {
      if (s.opener === this) s.opener = null;
      throw new SocketClosed(`${this.name}()`);
    }
    if (!this.started) {
      this.started = true;
      s.opener = this;
      s.openError = null;
      this.begin();
    }
    if (this.opened()) {
      if (s.opener === this) s.opener = null;
      return true;
    }
    const error = s.openError;
    if (error !== null && s.state === "fresh" && !s.handleOpen) {
      s.openError = null;
      if (s.opener === this) s.opener = null;
      throw error;
    }
    return false;
  }

  protected abstract readonly name: string;

  protected wait(): void {}

  protected unwait(): void {
    if (this.sock.opener === this) this.sock.opener = null;
  }
}

/** `bindAndListen`: a `net.Server` (TCP/Unix) listening, or a bound `dgram` socket. */
export class ListenOp extends OpenOp {
  protected readonly name = "bindAndListen";

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
      const udp = s.udp ?? createUdp(s, this.options.reuseAddr);
      const { host, port } = this.addr as InetAddress;
      udp.bind({ address: host, port });
      return;
    }
    const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true });
    s.attachServer(server);
    const backlog = Math.max(1, this.options.backlog); // Node reads 0 as "the default, 511"
    s.listenBacklog = backlog;
    if (s.kind === "unix") {
      s.path = (this.addr as UnixAddress).path;
      // libuv unlinks the name it bound when the server closes, whatever is
      // there by then: it binds a fresh name, moved to the path once listening.
      s.staged = SocketFile.staging(s.path);
      server.listen({ path: s.staged ?? s.path, backlog });
      return;
    }
    const { host, port } = this.addr as InetAddress;
    if (net.isIP(host) !== 0) {
      server.listen({ host, port, backlog });
      return;
    }
    s.resolve(host, (error, ip) => {
      if (s.server !== server || s.state === "closed") return;
      if (error) {
        // The server never listened: it has no handle to close.
        s.openError = error;
        s.server = null;
        s.handleOpen = false;
        s.opener?.ready();
        return;
      }
      server.listen({ host: ip, port, backlog });
    });
  }
}

/** Makes a fresh UDP socket's `dgram` handle. */
export function createUdp(s: UvSocket, reuseAddr: boolean): dgram.Socket {
  const udp = dgram.createSocket({ type: s.kind === "udp6" ? "udp6" : "udp4", reuseAddr });
  s.attachUdp(udp);
  return udp;
}

/** `connect`: a `net.Socket` connecting; the socket is fresh again if it fails. */
export class ConnectOp extends OpenOp {
  protected readonly name = "connect";

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
    s.attachStream(stream);
    stream.once("connect", () => {
      if (s.stream !== stream || s.state !== "connecting") return;
      s.state = "connected";
      s.opener?.ready();
    });
    if (s.kind === "unix") return void stream.connect({ path: (this.addr as UnixAddress).path });
    const { host, port } = this.addr as InetAddress;
    if (net.isIP(host) !== 0) return void stream.connect({ host, port });
    s.resolve(host, (error, ip) => {
      if (s.stream !== stream || s.state !== "connecting") return;
      if (error)
        stream.destroy(error); // as a failed connect: "error", then "close"
      else stream.connect({ host: ip, port });
    });
  }
}

/** `recvfrom`: one queued datagram, truncated to the buffer. */
export class RecvOp extends QueuedOp<[number, Address]> {
  constructor(
    sock: UvSocket,
    private readonly buf: Uint8Array,
    private readonly off: number,
    private readonly len: number,
  ) {
    super(sock, "recvfrom", sock.receivers);
  }

  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") throw new SocketClosed("recvfrom()");
    const d = s.datagrams.shift();
    if (d !== undefined) {
      const n = Math.min(this.len, d.msg.length);
      this.buf.set(n === d.msg.length ? d.msg : d.msg.subarray(0, n), this.off);
      this.value = [n, d.from];
      s.wakeReceiver();
      return true;
    }
    const error = s.udpError;
    if (error !== null) {
      s.udpError = null;
      throw error;
    }
    return false;
  }
}

/**
 * `sendto`: one datagram; done when Node's send callback says so. It waits
 * among the socket's senders, so that closing the socket wakes it (Node may
 * never call back for a datagram of a closed socket).
 */
export class SendOp extends QueuedOp<number> {
  private started = false;
  private sent = false;
  private error: Error | null = null;
  private readonly onSent = (error: Error | null): void => {
    this.sent = true;
    this.error = error;
    removeWaiter(this.sock.senders, this);
    this.ready();
  };

  constructor(
    sock: UvSocket,
    private readonly buf: Uint8Array,
    private readonly off: number,
    private readonly len: number,
    private readonly addr: InetAddress,
  ) {
    super(sock, "sendto", sock.senders);
  }

  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") throw new SocketClosed("sendto()");
    if (!this.started) {
      this.started = true;
      const { host } = this.addr;
      if (net.isIP(host) !== 0) this.send(host);
      else
        s.resolve(host, (error, ip) => {
          if (error) this.onSent(error);
          else if (s.state !== "closed") this.send(ip);
        });
      return false;
    }
    if (!this.sent) return false;
    if (this.error !== null) throw this.error;
    this.value = this.len;
    return true;
  }

  private send(ip: string): void {
    const s = this.sock;
    const udp = s.udp ?? createUdp(s, true);
    if (s.state === "fresh") s.state = "bound"; // Node binds on the first send
    udp.send(this.buf, this.off, this.len, this.addr.port, ip, this.onSent);
  }
}

/** `close`: begins closing, then waits until the Node handle is gone. */
export class CloseOp extends QueuedOp<void> {
  private started = false;

  constructor(sock: UvSocket) {
    super(sock, "close", sock.closers);
  }

  protected attempt(): boolean {
    if (!this.started) {
      this.started = true;
      this.sock.closeNow();
    }
    return this.sock.gone;
  }
}
