/**
 * The libuv backend's socket: one record for the life of a Bobbin socket,
 * holding the role it has taken — a stream (its `net.Socket`, whose bytes
 * the record itself queues: `stream.ts`), a listener (`listener.ts`) or a
 * datagram socket (the kit's `NodeDatagram`), each over its Node handle.
 */
import * as net from "node:net";
import type { Writable } from "node:stream";
import type { LiveSockets } from "../backend/live.js";
import { NodeDatagram } from "../backend/node-datagram.js";
import { NodeSocket } from "../backend/node-socket.js";
import { type NodeWriter, NodeWrites } from "../backend/node-writes.js";
import type { Backend, ShutdownCommand } from "../contract.js";
import { SocketClosed } from "../errors.js";
import { systemError } from "../system-error.js";
import type { LibuvBackend } from "./backend.js";
import { UvListener } from "./listener.js";
import { HIGH_WATER, listen, type StreamOwner, streamWhere } from "./stream.js";

type Role = net.Socket | UvListener<UvSocket> | NodeDatagram;

/** @internal A socket of the libuv backend. */
export class UvSocket extends NodeSocket<Backend> implements NodeWriter, StreamOwner {
  // One field for the three roles, since a socket takes one at most: a field
  // for each would cost every connection two words holding null.
  #role: Role | null = null;
  /**
   * A stream's writes Node has not called back yet, the write operation
   * kept for reuse and whether it was shut down for sending: made at the
   * first write or shutdown (an idle connection holds none).
   */
  #writes: NodeWrites | null = null;

  /** The backend's sockets that hold a Node handle or a lookup. */
  protected override get live(): LiveSockets<NodeSocket> {
    return (this.backend as LibuvBackend).live;
  }

  protected override get highWater(): number {
    return HIGH_WATER;
  }

  /** A connected (or connecting) stream socket's Node socket. */
  get stream(): net.Socket | null {
    return this.roleAs(net.Socket);
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
    this.#writes = null;
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
    if (!(role instanceof net.Socket)) return `${this.kind} ${role.describe()}`;
    return `${this.kind} ${this.kind === "unix" ? "(unbound)" : streamWhere(role)}`;
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
    this.#writes?.abandon(this.error ?? new Error("the socket closed with writes pending"));
    this.wakeReaders();
    this.release();
  }

  streamError(): Error | null {
    return this.error;
  }

  get writes(): NodeWrites {
    this.#writes ??= new NodeWrites();
    return this.#writes;
  }

  /** A write's stream. @throws SocketClosed, the stream's error, `EPIPE` after `shutdown` or once the connection is gone. */
  writable(): Writable {
    if (this.state === "closed") throw new SocketClosed("write()");
    if (this.error !== null) throw this.error;
    if (this.#writes?.sendShut === true) throw systemError("EPIPE", "write", "the socket was shut down for sending");
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
    if (role instanceof net.Socket) {
      this.close();
      this.#writes?.close();
      if (!role.destroyed) role.destroy();
    } else role?.closeNow();
    this.opened();
  }
}
