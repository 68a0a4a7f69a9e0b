/**
 * Stream connections (TCP, and Unix sockets on one host): each socket of a
 * connection has an endpoint, and the two exchange segments over the
 * network. TCP's guarantees hold whatever the link does: the segments of a
 * direction arrive in order, none is lost (a partition holds them until it
 * is repaired), none is duplicated — until a reset or a crash ends the
 * connection.
 *
 * Flow control: a sender has at most `WINDOW` bytes that its peer has not
 * read yet (in flight or in the peer's buffer); a write waits for the peer
 * to read. The window opens as soon as the peer reads (the simulation does
 * not send window updates of their own).
 *
 * A connection starts with a SYN to the listener's host; the listener
 * answers with a SYN-ACK, or the host with an RST (nobody listens: the
 * connect is refused). A SYN that finds no room in the listener's queue, or
 * that a partition loses, is sent again after 1, 2, 4… s (six times, as
 * Linux does), after which the connect fails with `ETIMEDOUT`.
 */
import type { Address, SocketState } from "@bobbin/unix";
import { type BufferOp, type Parked, type ReceiveQueue, systemError, WaitQueue } from "@bobbin/unix/backend";
import type { Family } from "./address.js";
import { CallbackEvent } from "./clock.js";
import type { Host } from "./host.js";
import type { Flow } from "./link.js";
import type { Network } from "./network.js";
import { type Carrier, Packet } from "./packet.js";

/**
 * @internal What an end of a connection needs of its socket: the socket
 * record's receiving side holds the bytes received and not read yet (reading
 * them opens the peer's window), then the peer's FIN or the reset.
 */
export interface StreamSocket
  extends Pick<ReceiveQueue, "push" | "end" | "fail" | "clear" | "close" | "closed" | "shutdownReceive" | "receiveShut" | "queued"> {
  readonly host: Host;
  /** The bound address (`ip`, `port`); a Unix socket has none. */
  readonly ip: string;
  readonly port: number;
  state: SocketState;
  readonly isUnix: boolean;
  readonly family: Family;
  /** The socket's end of its connection (null again when connecting fails). */
  endpoint: Endpoint | null;
  /** Frees the socket's address on its host. */
  unbind(): void;
  /** `ip:port` (or the path), for the trace. */
  toString(): string;
}

/** @internal Where a SYN finds the listener at its destination (the backend's sockets, by host). */
export interface Switchboard {
  /** The listening socket at `ip:port` (or `path`) on `host`, or null when nobody listens there. */
  listenerAt(host: Host, family: Family, ip: string, port: number, path: string): Admitting | null;
}

/** @internal A listener as a SYN sees it. */
export interface Admitting {
  /** The server's end of a new connection, or null when the SYN is dropped (a duplicate, or the queue is full). */
  admit(syn: Syn): Endpoint | null;
}

/** How many bytes a sender may have that its peer has not read (send and receive buffers together). */
export const WINDOW = 256 * 1024;
/** The payload of a segment between two hosts (Ethernet's MSS), and on a host's loopback. */
const MSS_LINK = 1460;
const MSS_LOCAL = 65536;
/** The first retransmission timeout of a SYN, in ms, doubled at each retry. */
const SYN_RTO = 1000;
const SYN_RETRIES = 6;

const enum Kind {
  Data,
  Fin,
  Rst,
  SynAck,
}
const KIND_NAMES = ["data", "fin", "rst", "syn-ack"];

/** @internal A segment of an established (or establishing) connection. */
class Segment extends Packet {
  readonly reliable = true;

  constructor(
    network: Carrier,
    readonly kind: Kind,
    /** The endpoint that sent it; null for the RST of a host where nobody listens. */
    readonly sender: Endpoint | null,
    readonly receiver: Endpoint,
    from: Host,
    readonly bytes: Uint8Array | null,
  ) {
    super(network, from, receiver.socket.host, sender);
  }

  protected deliver(): void {
    this.receiver.arrive(this);
  }

  describe(): string {
    const size = this.bytes === null ? "" : ` ${this.bytes.length}`;
    return `tcp ${this.sender?.socket ?? this.from.name} > ${this.receiver.socket} ${KIND_NAMES[this.kind]}${size}`;
  }
}

/** @internal A SYN: asks the listener at `ip:port` (or `path`) on `to` for a connection. */
export class Syn extends Packet {
  readonly reliable = true;
  override readonly droppable = true;

  constructor(
    network: Carrier,
    readonly client: Endpoint,
    to: Host,
    /** The address it was sent to (`ip`, `port`), or the Unix path. */
    readonly ip: string,
    readonly port: number,
    readonly path: string,
  ) {
    super(network, client.socket.host, to, client);
  }

  protected deliver(): void {
    const client = this.client;
    const listener = client.switchboard.listenerAt(
      this.to,
      client.socket.family,
      this.ip,
      this.port,
      client.socket.isUnix ? this.path : "",
    );
    if (listener === null) {
      new Segment(this.network, Kind.Rst, null, client, this.to, null).send();
      return;
    }
    const server = listener.admit(this);
    if (server !== null) new Segment(this.network, Kind.SynAck, server, client, this.to, null).send();
  }

  describe(): string {
    return `tcp ${this.client.socket} > ${this.path || `${this.ip}:${this.port}`} syn`;
  }
}

/** @internal One end of a stream connection. */
export class Endpoint implements Flow {
  lastArrival = 0;
  /** The other end, while connected. */
  peer: Endpoint | null = null;
  /** The other end's address, as `accept` reports it. */
  remote: Address = { path: "" };
  /** `shutdown(…, "send")`: the FIN is sent; writes fail with `EPIPE`. */
  sendShut = false;
  /** Bytes sent that the peer has not read yet. */
  unacked = 0;
  /** Why the connection ended (`ECONNRESET`), or why connecting failed. */
  error: NodeJS.ErrnoException | null = null;
  readonly writers = new WaitQueue();
  /** The write operation reused while idle (see `SimBackend.write`; its socket keeps the read's). */
  writeOp: BufferOp<void> | null = null;
  connector: Parked<unknown> | null = null;
  private syn: Syn | null = null;
  private retry: CallbackEvent | null = null;
  private retries = 0;

  constructor(
    readonly socket: StreamSocket,
    readonly network: Network,
    /** Where its SYNs find their listener. */
    readonly switchboard: Switchboard,
  ) {}

  // -- connecting ------------------------------------------------------------

  /** Sends the SYN of a connect (the socket is `connecting`). */
  open(to: Host, ip: string, port: number, path: string): void {
    this.remote = path === "" ? { host: ip, port } : { path: "" };
    const syn = new Syn(this.network, this, to, ip, port, path);
    this.syn = syn;
    this.retries = 0;
    this.retry = new CallbackEvent(() => this.resend());
    syn.send();
    this.network.clock.schedule(this.retry, this.network.clock.now + SYN_RTO);
  }

  private resend(): void {
    if (this.socket.state !== "connecting" || this.syn === null) return;
    if (++this.retries > SYN_RETRIES) {
      this.fail(systemError("ETIMEDOUT", "connect", `no answer from ${describeAddress(this.remote)} after ${SYN_RETRIES} retries`));
      return;
    }
    const syn = this.syn;
    new Syn(this.network, this, syn.to, syn.ip, syn.port, syn.path).send();
    this.network.clock.schedule(this.retry!, this.network.clock.now + SYN_RTO * 2 ** this.retries);
  }

  /** Connecting failed: the socket is fresh again, and its connector hears `error`. */
  private fail(error: NodeJS.ErrnoException): void {
    this.stopConnecting();
    this.error = error;
    this.socket.unbind();
    this.socket.state = "fresh";
    this.socket.endpoint = null;
    this.wakeConnector();
  }

  private stopConnecting(): void {
    if (this.retry !== null) this.network.clock.cancel(this.retry);
    this.retry = null;
    this.syn = null;
  }

  // -- what arrives ------------------------------------------------------------

  /** A segment arrived (its host is up). */
  arrive(segment: Segment): void {
    const state = this.socket.state;
    switch (segment.kind) {
      case Kind.SynAck:
        if (state !== "connecting" || this.syn === null) {
          this.answerWithReset(segment);
          return;
        }
        this.stopConnecting();
        this.peer = segment.sender;
        this.socket.state = "connected";
        this.wakeConnector();
        return;
      case Kind.Data: {
        if (state !== "connected" || this.error !== null || this.peer !== segment.sender) {
          this.answerWithReset(segment);
          return;
        }
        const bytes = segment.bytes!;
        if (this.socket.receiveShut) {
          segment.sender!.acknowledge(bytes.length);
          return;
        }
        this.socket.push(bytes);
        return;
      }
      case Kind.Fin:
        if (state !== "connected" || this.peer !== segment.sender) return;
        this.socket.end();
        return;
      case Kind.Rst:
        if (state === "connecting" && this.syn !== null) {
          this.fail(systemError("ECONNREFUSED", "connect", `nobody listens at ${describeAddress(this.remote)}`));
          return;
        }
        if (state === "connected" && this.error === null && segment.sender === this.peer) this.reset();
        return;
    }
  }

  /** A segment reached an end that is not its peer's any more: tell the sender with an RST. */
  private answerWithReset(segment: Segment): void {
    const sender = segment.sender;
    if (sender !== null && segment.kind !== Kind.Rst) {
      new Segment(this.network, Kind.Rst, this, sender, this.socket.host, null).send();
    }
  }

  /** The connection was reset: reads and writes fail with `ECONNRESET` from now on. */
  reset(): void {
    const error = systemError("ECONNRESET", "read", "the connection was reset by the peer");
    error.message = "read ECONNRESET: the connection was reset by the peer";
    this.error = error;
    this.socket.clear();
    this.peer = null;
    this.unacked = 0;
    this.socket.fail(error);
    this.writers.wakeAll();
    this.wakeConnector();
  }

  // -- reading and writing -----------------------------------------------------

  /** How many bytes this end may send now. */
  get room(): number {
    return WINDOW - this.unacked;
  }

  /** Sends `buf[off, off + len)` (`len` ≤ `room`) as segments, each a copy. */
  send(buf: Uint8Array, off: number, len: number): void {
    const peer = this.peer!;
    const host = this.socket.host;
    const mss = peer.socket.host === host ? MSS_LOCAL : MSS_LINK;
    this.unacked += len;
    for (let sent = 0; sent < len; ) {
      const k = Math.min(mss, len - sent);
      const copy = new Uint8Array(k);
      copy.set(buf.subarray(off + sent, off + sent + k));
      new Segment(this.network, Kind.Data, this, peer, host, copy).send();
      sent += k;
    }
  }

  /** The peer read `n` of the bytes this end sent: the window opens. */
  acknowledge(n: number): void {
    this.network.events.touch(this.socket.host); // the reader's step changes this end's window
    this.unacked -= n;
    this.writers.wakeAll();
  }

  // -- ending ------------------------------------------------------------------

  /** `shutdown`: "send" sends the FIN; "receive" drops what is buffered and what arrives. */
  shutdown(send: boolean, receive: boolean): void {
    if (send && !this.sendShut) {
      this.sendShut = true;
      if (this.peer !== null) new Segment(this.network, Kind.Fin, this, this.peer, this.socket.host, null).send();
      this.writers.wakeAll();
    }
    if (receive && !this.socket.receiveShut) this.socket.shutdownReceive();
  }

  /**
   * The socket closes: a graceful FIN, or an RST when `abort` (a crash) or
   * when bytes were left unread (as Linux does). Waiters are woken when
   * `wake` (they fail with `SocketClosed`).
   */
  close(abort: boolean, wake: boolean): void {
    this.stopConnecting();
    const peer = this.peer;
    if (peer !== null && this.error === null) {
      if (abort || this.socket.queued !== 0) new Segment(this.network, Kind.Rst, this, peer, this.socket.host, null).send();
      else if (!this.sendShut) new Segment(this.network, Kind.Fin, this, peer, this.socket.host, null).send();
    }
    this.sendShut = true;
    if (!wake) {
      // A crash: the tasks waiting here are being cancelled, and see nothing of it.
      this.socket.closed = true;
      this.socket.clear();
      return;
    }
    this.socket.close();
    this.writers.wakeAll();
    this.wakeConnector();
  }

  private wakeConnector(): void {
    const c = this.connector;
    this.connector = null;
    c?.ready();
  }
}

/** `ip:port`, or the path. */
export function describeAddress(address: Address): string {
  return "path" in address ? address.path : `${address.host}:${address.port}`;
}
