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
    return this.roleAs(UvStream);
  }

  set stream(stream: UvStream | null) {
    this.setRole(UvStream, stream);
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
