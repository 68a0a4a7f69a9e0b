/**
 * A UDP socket over Node's `dgram`, for backends over Node handles: the
 * `dgram.Socket` (made at the first bind or send), the datagrams it received
 * and no task took yet, and `recvfrom`/`sendto` over them. A datagram is
 * sent once Node's send callback says so; Node may never call back for one
 * of a closed socket, so closing wakes the senders.
 */
import * as dgram from "node:dgram";
import * as net from "node:net";
import type { Address, InetAddress } from "../contract.js";
import { SocketClosed } from "../errors.js";
import { BufferOp } from "./buffer-op.js";
import { afterHandleClose, type NodeSocket } from "./node-socket.js";
import { Parked } from "./parked.js";
import { WaitQueue } from "./wait-queue.js";

/** Datagrams kept for `recvfrom`; later ones are dropped, as a full kernel buffer would. */
export const MAX_DATAGRAMS = 1024;

/**
 * The `dgram` side of a UDP {@link NodeSocket}. Make one at the socket's
 * first bind or send; the socket holds it until it is closed. A bind that
 * fails closes it (the socket is fresh again, `dropped` says so: a later
 * bind makes another), and its opener hears the error once it is gone.
 *
 * @example
 * ```ts
 * s.udp ??= new NodeDatagram(s, reuseAddr, () => (s.udp = null));
 * s.udp.udp.bind({ address: host, port });   // in an OpenOp: "bound" once listening
 * recvfrom(…) { return new DatagramRecvOp(s, s.udp!).init(buf, off, len); }
 * ```
 * @throws never itself (failures reach the operations).
 */
export class NodeDatagram {
  readonly udp: dgram.Socket;
  readonly #received: { readonly msg: Buffer; readonly from: InetAddress }[] = [];
  readonly receivers = new WaitQueue();
  /** `sendto`s waiting for Node's send callback. */
  readonly senders = new WaitQueue();
  /** A receive error, for the next `recvfrom`. */
  #error: Error | null = null;

  constructor(
    private readonly sock: NodeSocket,
    reuseAddr: boolean,
    /** The bind failed: this Node socket is gone (a later bind makes another). */
    dropped: () => void,
  ) {
    const udp = dgram.createSocket({ type: sock.kind === "udp6" ? "udp6" : "udp4", reuseAddr });
    this.udp = udp;
    sock.hold();
    udp.on("message", (msg: Buffer, rinfo: dgram.RemoteInfo) => {
      if (this.#received.length >= MAX_DATAGRAMS) return;
      this.#received.push({ msg, from: { host: rinfo.address, port: rinfo.port } });
      this.receivers.wakeFirst();
    });
    udp.on("listening", () => {
      if (sock.state === "closed") return;
      sock.state = "bound";
      sock.opened();
    });
    udp.on("error", (error: Error) => {
      if (sock.state === "closed") return;
      if (sock.opener !== null && sock.state === "fresh") {
        // bind failed: drop this handle, and report once it is gone.
        dropped();
        this.#close(() => sock.openFailed(error));
        return;
      }
      this.#error = error;
      this.receivers.wakeFirst();
    });
  }

  /** "127.0.0.1:5353" (a dump). */
  describe(): string {
    try {
      const a = this.udp.address();
      return `${a.address}:${a.port}`;
    } catch {
      return "(unbound)"; // not bound yet
    }
  }

  /** The address it is bound to. @throws TypeError before it is bound. */
  address(): Address {
    try {
      const a = this.udp.address();
      return { host: a.address, port: a.port };
    } catch {
      throw new TypeError(`localAddress(): the ${this.sock.kind} socket is not bound yet`);
    }
  }

  /**
   * Copies the oldest datagram (truncated to `len`) into `buf[off…]`:
   * its size and sender, or null when none is there (wakes the next
   * receiver if more wait).
   * @throws the receive error, once.
   */
  take(buf: Uint8Array, off: number, len: number): [number, Address] | null {
    const d = this.#received.shift();
    if (d === undefined) {
      const error = this.#error;
      this.#error = null;
      if (error !== null) throw error;
      return null;
    }
    if (this.#received.length !== 0) this.receivers.wakeFirst();
    const n = Math.min(len, d.msg.length);
    buf.set(n === d.msg.length ? d.msg : d.msg.subarray(0, n), off);
    return [n, d.from];
  }

  /** The socket closes: receivers and senders fail, the Node socket goes. */
  closeNow(): void {
    this.#received.length = 0;
    this.#close();
    this.receivers.wakeAll();
    this.senders.wakeAll();
  }

  /** Closes the Node socket; once it is gone, releases the socket's hold on it and runs `then`. */
  #close(then?: () => void): void {
    try {
      this.udp.close();
    } catch {
      // already closed by an error
    }
    afterHandleClose(() => {
      this.sock.release();
      then?.();
    });
  }
}

/**
 * `recvfrom` over a {@link NodeDatagram}: one datagram, truncated to the buffer.
 *
 * @example
 * ```ts
 * recvfrom(sock: Socket, buf: Uint8Array, off: number, len: number) {
 *   const s = sock as MySocket;
 *   return new DatagramRecvOp(s, s.udp!).init(buf, off, len);
 * }
 * ```
 * @throws SocketClosed, the receive error, `Cancelled`, `Timeout`.
 */
export class DatagramRecvOp extends BufferOp<[number, Address]> {
  constructor(
    private readonly sock: NodeSocket,
    private readonly datagram: NodeDatagram,
  ) {
    super("recvfrom");
  }

  protected attempt(): boolean {
    if (this.sock.state === "closed") throw new SocketClosed("recvfrom()");
    const got = this.datagram.take(this.buf, this.off, this.len);
    if (got === null) return false;
    this.value = got;
    return true;
  }

  protected wait(): void {
    this.datagram.receivers.add(this);
  }

  protected leave(): void {
    this.datagram.receivers.leave(this);
  }

  override describe(): string {
    return `${super.describe()} ${this.sock.where()}`;
  }
}

/**
 * `sendto` over the {@link NodeDatagram} `datagram()` gives (made at the
 * first send, which binds the socket): a host name is resolved by the
 * socket's counted lookup; done once Node's send callback says so.
 *
 * @example
 * ```ts
 * sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address) {
 *   const s = sock as MySocket;
 *   return new DatagramSendOp(s, () => (s.udp ??= new NodeDatagram(s, true, () => (s.udp = null))), buf, off, len, addr as InetAddress);
 * }
 * ```
 * @throws SocketClosed, the send's error (`EMSGSIZE`, `ENOTFOUND`…), `Cancelled`, `Timeout`.
 */
export class DatagramSendOp extends Parked<number> {
  #datagram: NodeDatagram | null = null;
  #sent = false;
  #error: Error | null = null;
  readonly #onSent = (error: Error | null): void => {
    this.#sent = true;
    this.#error = error;
    if (this.#datagram!.senders.leave(this)) this.ready();
  };

  constructor(
    private readonly sock: NodeSocket,
    private readonly datagram: () => NodeDatagram,
    private readonly buf: Uint8Array,
    private readonly off: number,
    private readonly len: number,
    private readonly addr: InetAddress,
  ) {
    super("sendto");
  }

  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") throw new SocketClosed("sendto()");
    if (this.#datagram === null) {
      this.#datagram = this.datagram();
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

  override describe(): string {
    return `${super.describe()} ${this.sock.where()}`;
  }
}
