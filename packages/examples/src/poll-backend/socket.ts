/**
 * A socket of the poll backend: what Node delivers stays until a task takes it (bytes in the `net.Socket`'s
 * buffer, read in paused mode; connections in `backlog`); a Node callback only says the socket `changed`.
 */
import type * as net from "node:net";
import { type Backend, SocketClosed, type SocketKind } from "@bobbin/unix";
import {
  type AdoptedServer,
  AGAIN,
  type LiveSockets,
  NodeDatagram,
  type NodeServer,
  NodeSocket,
  type NodeWriter,
  NodeWrites,
  type ShareGuard,
  systemError,
  WaitQueue,
} from "@bobbin/unix/backend";

/** A socket of the poll backend (its roles: a stream, a listener or a UDP socket). */
export class PollSocket extends NodeSocket<Backend> implements NodeWriter {
  readonly waiters = new WaitQueue(); // the operations waiting for the socket to change
  readonly writes = new NodeWrites();
  stream: net.Socket | null = null;
  server: NodeServer | null = null;
  udp: NodeDatagram | null = null;
  readonly backlog: PollSocket[] = [];
  sendShut = false;
  /** Shut down for receiving (the kit's `receiveShut` is its own reads'). */
  readShut = false;
  /** A listener given to other domains keeps its guard (see `describeListener`); one adopted, its relay. */
  guard: ShareGuard | null = null;
  relay: AdoptedServer | null = null;
  readonly changed = (): void => this.waiters.wakeAll();

  constructor(
    kind: SocketKind,
    backend: Backend,
    readonly live: LiveSockets<NodeSocket>,
  ) {
    super(kind, backend);
  }

  /** Makes this socket a stream over `stream` (accepted, or connecting), read in paused mode. */
  attach(stream: net.Socket): void {
    this.stream = stream;
    this.hold();
    for (const event of ["readable", "end"]) stream.on(event, this.changed);
    stream.on("connect", () => {
      this.state = "connected";
      this.opened();
    });
    stream.on("error", (error: Error) => {
      if (this.state === "connecting") this.openError = error;
      else this.error ??= error;
      this.changed();
    });
    stream.on("close", () => {
      if (this.state === "connecting") this.state = "fresh"; // a failed connect: fresh again, its handle gone
      this.writes.abandon(this.error ?? new Error("the connection closed with writes pending"));
      this.release();
      this.opened();
      this.changed();
    });
  }

  /**
   * Up to `len` bytes Node buffered; 0 at the end of the stream. (The kit's
   * `BackendSocket` would queue the bytes itself, for a backend that is
   * handed them; this one leaves them in Node's buffer.)
   */
  take(buf: Uint8Array, off: number, len: number): number | typeof AGAIN {
    const stream = this.stream!;
    if (this.readShut) return 0;
    const n = Math.min(len, stream.readableLength);
    if (n !== 0) {
      buf.set(stream.read(n) as Buffer, off);
      return n;
    }
    if (stream.readableEnded) return 0;
    if (this.error !== null) throw this.error;
    if (stream.destroyed) return 0;
    stream.read(0); // asks Node to read on (and to emit 'end' at the end)
    return AGAIN;
  }

  /** The error a failed write reports (the kit's `NodeWriteOp` asks). */
  streamError(): Error | null {
    return this.error;
  }

  /** The stream, when a write may go to it (the kit's `NodeWriteOp` asks). */
  writable(): net.Socket {
    if (this.state === "closed") throw new SocketClosed("write()");
    if (this.error !== null) throw this.error;
    if (this.sendShut || this.stream!.destroyed) throw systemError("EPIPE", "write", "the socket was shut down for sending");
    return this.stream!;
  }

  /** The `dgram` handle, made at the first bind or send. */
  datagram(reuseAddr: boolean): NodeDatagram {
    this.udp ??= new NodeDatagram(this, reuseAddr, () => (this.udp = null));
    return this.udp;
  }

  /** A connection `server` accepted: a client for `accept`. */
  connection(stream: net.Socket): void {
    const client = new PollSocket(this.kind, this.backend, this.live);
    client.state = "connected";
    client.attach(stream);
    this.backlog.push(client);
    this.changed();
  }

  /** Throws the socket's error, once (an accept error: the listener stays). */
  throwError(): never {
    const error = this.error!;
    this.error = null;
    throw error;
  }

  /** An accept failed (EMFILE…): the next `accept` throws it. */
  acceptFailed(error: Error): void {
    this.error = error;
    this.changed();
  }

  /** Begins closing: `closed` at once (every waiter tries again, and fails), the Node handles on their way out. */
  closeNow(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.writes.close();
    this.guard?.seal(); // domains duplicating its descriptor finish first
    if (this.stream !== null && !this.stream.destroyed) this.stream.destroy();
    for (const client of this.backlog.splice(0)) client.closeNow();
    this.relay?.close();
    this.server?.close();
    this.udp?.closeNow();
    this.opened();
    this.changed();
  }
}
