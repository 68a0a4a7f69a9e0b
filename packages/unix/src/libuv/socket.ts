/**
 * The libuv backend's socket: one object for the life of a Bobbin socket,
 * holding the role it has taken — a stream (`stream.ts`), a listener
 * (`listener.ts`) or a datagram socket (the kit's `NodeDatagram`), each over
 * its Node handle.
 */

import type { LiveSockets } from "../backend/live.js";
import type { NodeDatagram } from "../backend/node-datagram.js";
import { NodeSocket } from "../backend/node-socket.js";
import type { Backend, SocketKind } from "../contract.js";
import type { UvListener } from "./listener.js";
import type { UvStream } from "./stream.js";

/** @internal A socket of the libuv backend. */
export class UvSocket extends NodeSocket<Backend> {
  /** A connected (or connecting) stream socket's connection. */
  stream: UvStream | null = null;
  /** A listening stream socket's connections not accepted yet. */
  listener: UvListener<UvSocket> | null = null;
  /** A UDP socket's Node socket, from its first bind or send. */
  datagram: NodeDatagram | null = null;

  constructor(
    kind: SocketKind,
    backend: Backend,
    /** The backend's sockets that hold a Node handle or a lookup. */
    live: LiveSockets<NodeSocket>,
  ) {
    super(kind, backend, live);
  }

  /** "tcp4 127.0.0.1:3000 ← 127.0.0.1:51234", "tcp4 127.0.0.1:3000 (listening)": the socket in dumps. */
  override describe(): string {
    const role = this.listener ?? this.stream ?? this.datagram;
    return `${this.kind} ${role === null ? "(unbound)" : role.describe()}`;
  }

  /** Begins closing: state `closed`, every waiter woken (they fail with `SocketClosed`), the Node handles on their way out. */
  closeNow(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.stream?.closeNow();
    this.listener?.closeNow();
    this.datagram?.closeNow();
    this.opened();
  }
}
