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
import type { Address } from "@bobbin/unix";
import { type Parked, systemError, WaitQueue } from "@bobbin/unix/backend";
import { CallbackEvent } from "./clock.js";
import type { Host } from "./host.js";
import type { Flow } from "./link.js";
import type { Network } from "./network.js";
import type { ReadOp, WriteOp } from "./ops.js";
import { Packet } from "./packet.js";
import type { SimSocket } from "./socket.js";

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
    network: Network,
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
    network: Network,
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
    const sock = client.socket.isUnix
      ? this.to.ports.paths.get(this.path)
      : this.to.ports.find("tcp", client.socket.family, this.ip, this.port);
    if (sock?.listener == null) {
      new Segment(this.network, Kind.Rst, null, client, this.to, null).send();
      return;
    }
    const server = sock.listener.admit(this);
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
  /** Bytes received and not read yet, `head` bytes of the first chunk already read. */
  private readonly chunks: Uint8Array[] = [];
  private head = 0;
  buffered = 0;
  /** The peer ended its stream (FIN). */
  finReceived = false;
  /** `shutdown(…, "receive")`: reads return 0 and arriving data is dropped. */
  recvShut = false;
  /** `shutdown(…, "send")`: the FIN is sent; writes fail with `EPIPE`. */
  sendShut = false;
  /** Bytes sent that the peer has not read yet. */
  unacked = 0;
  /** Why the connection ended (`ECONNRESET`), or why connecting failed. */
  error: NodeJS.ErrnoException | null = null;
  readonly readers = new WaitQueue();
  readonly writers = new WaitQueue();
  /** The read and write operations reused while idle (see `SimBackend.read`). */
  readOp: ReadOp | null = null;
  writeOp: WriteOp | null = null;
  connector: Parked<unknown> | null = null;
  private syn: Syn | null = null;
  private retry: CallbackEvent | null = null;
  private retries = 0;

  constructor(
    readonly socket: SimSocket,
    readonly network: Network,
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
        if (this.recvShut) {
          segment.sender!.acknowledge(bytes.length);
          return;
        }
        this.chunks.push(bytes);
        this.buffered += bytes.length;
        this.wakeReader();
        return;
      }
      case Kind.Fin:
        if (state !== "connected" || this.peer !== segment.sender) return;
        this.finReceived = true;
        this.readers.wakeAll();
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
    this.error = systemError("ECONNRESET", "read", "the connection was reset by the peer");
    this.error.message = "read ECONNRESET: the connection was reset by the peer";
    this.dropReceived();
    this.peer = null;
    this.unacked = 0;
    this.wakeAll();
  }

  // -- reading and writing -----------------------------------------------------

  /** Copies up to `len` received bytes into `buf[off…]`; returns how many. */
  take(buf: Uint8Array, off: number, len: number): number {
    let n = 0;
    const chunks = this.chunks;
    while (n < len && chunks.length !== 0) {
      const chunk = chunks[0]!;
      const k = Math.min(chunk.length - this.head, len - n);
      buf.set(k === chunk.length ? chunk : chunk.subarray(this.head, this.head + k), off + n);
      n += k;
      this.head += k;
      if (this.head === chunk.length) {
        chunks.shift();
        this.head = 0;
      }
    }
    this.buffered -= n;
    this.peer?.acknowledge(n);
    return n;
  }

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
    if (receive && !this.recvShut) {
      this.recvShut = true;
      this.dropReceived();
      this.readers.wakeAll();
    }
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
      if (abort || this.buffered !== 0) new Segment(this.network, Kind.Rst, this, peer, this.socket.host, null).send();
      else if (!this.sendShut) new Segment(this.network, Kind.Fin, this, peer, this.socket.host, null).send();
    }
    this.sendShut = true;
    this.dropReceived();
    if (wake) this.wakeAll();
  }

  private dropReceived(): void {
    if (this.buffered !== 0) this.peer?.acknowledge(this.buffered);
    this.chunks.length = 0;
    this.head = 0;
    this.buffered = 0;
  }

  // -- waking ------------------------------------------------------------------

  /** Wakes the first reader (the next one is woken by it if bytes remain). */
  wakeReader(): void {
    this.readers.wakeFirst();
  }

  private wakeConnector(): void {
    const c = this.connector;
    this.connector = null;
    c?.ready();
  }

  /** Wakes every waiter: the connection ended or the socket closed. */
  wakeAll(): void {
    this.readers.wakeAll();
    this.writers.wakeAll();
    this.wakeConnector();
  }
}

/** `ip:port`, or the path. */
export function describeAddress(address: Address): string {
  return "path" in address ? address.path : `${address.host}:${address.port}`;
}
