/**
 * The libuv backend's socket: one record for the life of a Bobbin socket,
 * holding the role it has taken — a stream (its `net.Socket`, whose bytes
 * the record itself queues: `stream.ts`), a listener (`listener.ts`) or a
 * datagram socket (the kit's `NodeDatagram`), each over its Node handle.
 */
import * as net from "node:net";
import type { Writable } from "node:stream";
import type { LiveSockets } from "../backend/live.js";
import type { NodeBackend } from "../backend/node-backend.js";
import { NodeDatagram } from "../backend/node-datagram.js";
import { NodeSocket } from "../backend/node-socket.js";
import { type NodeWriter, NodeWrites } from "../backend/node-writes.js";
import type { Backend, ShutdownCommand } from "../contract.js";
import { SocketClosed } from "../errors.js";
import { systemError } from "../system-error.js";
import { UvListener } from "./listener.js";
import { HIGH_WATER, listen, type StreamOwner, streamWhere } from "./stream.js";

/**
 * A stream that has written or shut down for sending: its Node socket, with
 * the writes Node has not called back yet, the write operation kept for
 * reuse and whether it was shut down (`NodeWrites`). It takes the place of
 * the bare Node socket as the record's role at the first write or shutdown,
 * so an idle connection holds no field for writes it never made.
 */
class WritingStream extends NodeWrites {
  constructor(readonly stream: net.Socket) {
    super();
  }
}

type Role = net.Socket | WritingStream | UvListener<UvSocket> | NodeDatagram;

/** @internal A socket of the libuv backend. */
export class UvSocket extends NodeSocket<Backend & NodeBackend> implements NodeWriter, StreamOwner {
  // One field for the three roles, since a socket takes one at most: a field
  // for each would cost every connection two words holding null. A stream
  // that wrote is a WritingStream, which holds its writes.
  #role: Role | null = null;

  /** The backend's sockets that hold a Node handle or a lookup. */
  protected override get live(): LiveSockets<NodeSocket> {
    return this.backend.live;
  }

  protected override get highWater(): number {
    return HIGH_WATER;
  }

  /** A connected (or connecting) stream socket's Node socket. */
  get stream(): net.Socket | null {
    const role = this.#role;
    return role instanceof net.Socket ? role : role instanceof WritingStream ? role.stream : null;
  }

  /** A stream's writes, if it wrote or shut down. */
  private get madeWrites(): WritingStream | null {
    const role = this.#role;
    return role instanceof WritingStream ? role : null;
  }

  /** Becomes a stream over `stream` (accepted, or connecting), which it holds until Node's `'close'`. */
  connectTo(stream: net.Socket): void {
    this.#role = stream;
    this.hold();
    listen(stream, this);
  }

  /** A failed connect: the socket is no stream any more. */
  dropStream(): void {
    this.setRole(net.Socket, null);
    this.setRole(WritingStream, null);
  }

  /** A listening stream socket's connections not accepted yet. */
  get listener(): UvListener<UvSocket> | null {
    return this.roleAs(UvListener<UvSocket>);
  }

  set listener(listener: UvListener<UvSocket> | null) {
    this.setRole(UvListener, listener);
  }

  /** A UDP socket's Node socket, from its first bind or send. */
  get datagram(): NodeDatagram | null {
    return this.roleAs(NodeDatagram);
  }

  set datagram(datagram: NodeDatagram | null) {
    this.setRole(NodeDatagram, datagram);
  }

  /** @internal Its role if it is one of `Class`'s, else null. */
  private roleAs<R extends Role>(Class: abstract new (...args: never[]) => R): R | null {
    const role = this.#role;
    return role instanceof Class ? role : null;
  }

  /** @internal Takes `role`; null drops the role only if it is one of `Class`'s (a socket has one role at most). */
  private setRole(Class: abstract new (...args: never[]) => Role, role: Role | null): void {
    if (role !== null || this.#role instanceof Class) this.#role = role;
  }

  /** "tcp4 127.0.0.1:3000 ← 127.0.0.1:51234", "tcp4 127.0.0.1:3000 (listening)": the socket in dumps. */
  override where(): string {
    const role = this.#role;
    if (role === null) return `${this.kind} (unbound)`;
    const stream = this.stream;
    if (stream === null) return `${this.kind} ${(role as UvListener<UvSocket> | NodeDatagram).describe()}`;
    return `${this.kind} ${this.kind === "unix" ? "(unbound)" : streamWhere(stream)}`;
  }

  // -- the stream role --

  failed(error: Error): void {
    if (this.state === "connecting") this.openError = error;
    else this.fail(error);
  }

  gone(): void {
    if (this.state === "connecting") {
      // A failed connect: the socket is fresh again, once its handle is gone.
      this.state = "fresh";
      this.opened();
    }
    this.madeWrites?.abandon(this.error ?? new Error("the socket closed with writes pending"));
    this.wakeReaders();
    this.release();
  }

  streamError(): Error | null {
    return this.error;
  }

  /** Its writes (made at the first write or shutdown). @throws TypeError on a socket that is no stream (`write` and `shutdown` check first). */
  get writes(): NodeWrites {
    const role = this.#role;
    if (role instanceof WritingStream) return role;
    if (!(role instanceof net.Socket)) throw new TypeError(`write(): the ${this.kind} socket is no connected stream`);
    const writes = new WritingStream(role);
    this.#role = writes;
    return writes;
  }

  /** A write's stream. @throws SocketClosed, the stream's error, `EPIPE` after `shutdown` or once the connection is gone. */
  writable(): Writable {
    if (this.state === "closed") throw new SocketClosed("write()");
    if (this.error !== null) throw this.error;
    if (this.madeWrites?.sendShut === true) throw systemError("EPIPE", "write", "the socket was shut down for sending");
    const stream = this.stream!;
    if (stream.destroyed) throw systemError("EPIPE", "write", "the connection is closed");
    return stream;
  }

  /** Reading starts (a connection accepted with `pauseOnConnect` is read once a task accepts it). */
  startReading(): void {
    this.stream!.resume();
  }

  protected override pauseSource(): void {
    this.stream!.pause();
  }

  protected override resumeSource(): void {
    this.stream!.resume();
  }

  shutdown(how: ShutdownCommand): void {
    const stream = this.stream!;
    if (how !== "receive" && !this.writes.sendShut) {
      this.writes.sendShut = true;
      if (!stream.destroyed) stream.end();
    }
    if (how !== "send" && !this.receiveShut) this.shutdownReceive();
  }

  /** Begins closing: state `closed`, every waiter woken (they fail with `SocketClosed`), the Node handles on their way out. */
  closeNow(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    const role = this.#role;
    const stream = this.stream;
    if (stream !== null) {
      this.close();
      this.madeWrites?.close();
      if (!stream.destroyed) stream.destroy();
    } else (role as UvListener<UvSocket> | NodeDatagram | null)?.closeNow();
    this.opened();
  }
}
