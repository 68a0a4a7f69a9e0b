/**
 * The libuv backend's socket: one object for the life of a Bobbin socket,
 * holding the role it has taken — a stream (`stream.ts`), a listener
 * (`listener.ts`) or a datagram socket (the kit's `NodeDatagram`), each over
 * its Node handle.
 */

import type { LiveSockets } from "../backend/live.js";
import { NodeDatagram } from "../backend/node-datagram.js";
import { NodeSocket } from "../backend/node-socket.js";
import type { Backend, SocketKind } from "../contract.js";
import { UvListener } from "./listener.js";
import { UvStream } from "./stream.js";

type Role = UvStream | UvListener<UvSocket> | NodeDatagram;

/** @internal A socket of the libuv backend. */
export class UvSocket extends NodeSocket<Backend> {
  // One field for the three roles, since a socket takes one at most: a field
  // for each would cost every connection two words holding null.
  #role: Role | null = null;

  constructor(
    kind: SocketKind,
    backend: Backend,
    /** The backend's sockets that hold a Node handle or a lookup. */
    live: LiveSockets<NodeSocket>,
  ) {
    super(kind, backend, live);
  }

  /** A connected (or connecting) stream socket's connection. */
  get stream(): UvStream | null {
    const role = this.#role;
    return role instanceof UvStream ? role : null;
  }

  set stream(stream: UvStream | null) {
    if (stream !== null || this.#role instanceof UvStream) this.#role = stream;
  }

  /** A listening stream socket's connections not accepted yet. */
  get listener(): UvListener<UvSocket> | null {
    const role = this.#role;
    return role instanceof UvListener ? role : null;
  }

  set listener(listener: UvListener<UvSocket> | null) {
    if (listener !== null || this.#role instanceof UvListener) this.#role = listener;
  }

  /** A UDP socket's Node socket, from its first bind or send. */
  get datagram(): NodeDatagram | null {
    const role = this.#role;
    return role instanceof NodeDatagram ? role : null;
  }

  set datagram(datagram: NodeDatagram | null) {
    if (datagram !== null || this.#role instanceof NodeDatagram) this.#role = datagram;
  }

  /** "tcp4 127.0.0.1:3000 ← 127.0.0.1:51234", "tcp4 127.0.0.1:3000 (listening)": the socket in dumps. */
  override describe(): string {
    const role = this.#role;
    return `${this.kind} ${role === null ? "(unbound)" : role.describe()}`;
  }

  /** Begins closing: state `closed`, every waiter woken (they fail with `SocketClosed`), the Node handles on their way out. */
  closeNow(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.#role?.closeNow();
    this.opened();
  }
}
