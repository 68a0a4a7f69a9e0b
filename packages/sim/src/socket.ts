/**
 * A simulated socket: what `@bobbin/unix` sees (kind, state, backend) plus
 * where it lives (its host and bound address) and its role once it has one:
 * a connection's endpoint, a listener, or a UDP mailbox.
 */
import type { Address, Backend, Socket, SocketKind, SocketState } from "@bobbin/unix";
import type { Family } from "./address.js";
import type { Letter } from "./datagram.js";
import type { Host } from "./host.js";
import type { Inbox } from "./inbox.js";
import type { Listener } from "./listener.js";
import type { Protocol } from "./ports.js";
import type { Endpoint } from "./stream.js";

/** @internal */
export class SimSocket implements Socket {
  state: SocketState = "fresh";
  /** The bound address (`ip`, `port`), or `path` for a Unix socket. */
  ip = "";
  port = 0;
  path = "";
  /** A connecting or connected stream socket's end of the connection. */
  endpoint: Endpoint | null = null;
  /** A listening stream socket's queue of connections. */
  listener: Listener | null = null;
  /** A bound UDP socket's datagrams, and the tasks in `recvfrom`. */
  mailbox: Inbox<Letter> | null = null;
  /** Whether `ip:port` (or `path`) is taken in the host's namespace. */
  private bound = false;

  constructor(
    readonly kind: SocketKind,
    readonly backend: Backend,
    readonly host: Host,
  ) {}

  /** IPv4 or IPv6 (a Unix socket says 4: it has no family, and never asks). */
  get family(): Family {
    return this.kind === "tcp6" || this.kind === "udp6" ? 6 : 4;
  }

  get protocol(): Protocol {
    return this.kind === "udp4" || this.kind === "udp6" ? "udp" : "tcp";
  }

  get isUnix(): boolean {
    return this.kind === "unix";
  }

  /** The bound address, as `getsockname` says it. */
  get local(): Address {
    return this.isUnix ? { path: this.path } : { host: this.ip, port: this.port };
  }

  /** Takes `ip:port` (or `path`, set first) in the host's namespace. */
  bind(): void {
    if (this.isUnix) this.host.ports.paths.set(this.path, this);
    else this.host.ports.bind(this.protocol, this.family, this);
    this.bound = true;
  }

  /** Frees the socket's address in the host's namespace. */
  unbind(): void {
    if (!this.bound) return;
    this.bound = false;
    const ports = this.host.ports;
    if (!this.isUnix) ports.unbind(this.protocol, this.family, this);
    else if (ports.paths.get(this.path) === this) ports.paths.delete(this.path);
  }

  /** `using`: begins closing, as an ownership finaliser does. */
  [Symbol.dispose](): void {
    this.backend.closeNow(this);
  }

  /** `ip:port` (or the path), for the trace and messages. */
  toString(): string {
    return this.isUnix ? this.path || "(unnamed)" : `${this.family === 6 ? `[${this.ip}]` : this.ip}:${this.port}`;
  }
}
