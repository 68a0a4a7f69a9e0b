/**
 * A simulated socket: what `@bobbin/unix` sees (kind, state, backend) plus
 * where it lives (its host and bound address) and the role it takes — a
 * connection's end (`stream.ts`), a listener (`listener.ts`) or a UDP
 * mailbox (`datagram.ts`); and the sockets of every host, by which packets
 * find the socket they are for.
 */
import type { Address, Backend, InetAddress, SocketKind } from "@bobbin/unix";
import { BackendSocket, systemError } from "@bobbin/unix/backend";
import { type Family, wildcardOf } from "./address.js";
import { Datagram, type Letter, MAILBOX_SIZE, type PostOffice } from "./datagram.js";
import type { Host } from "./host.js";
import { Inbox } from "./inbox.js";
import { type Admitted, Listener } from "./listener.js";
import type { Destination, Network } from "./network.js";
import { Ports, type Protocol } from "./ports.js";
import { type Admitting, Endpoint, type StreamSocket, type Switchboard, type Syn } from "./stream.js";

/** The largest UDP payload (IPv4, IPv6). */
const MAX_DATAGRAM = { 4: 65507, 6: 65527 } as const;

/** @internal The sockets of one host: its namespace of bound addresses, and the sockets not closed yet. */
export class HostSockets {
  readonly ports = new Ports<SimSocket>();
  readonly open = new Set<SimSocket>();
}

/** @internal The sockets of every host of a world, by host: where packets find their socket. */
export class WorldSockets implements Switchboard, PostOffice {
  readonly #byHost = new WeakMap<Host, HostSockets>();

  constructor(readonly network: Network) {}

  /** The sockets of `host`. */
  on(host: Host): HostSockets {
    let sockets = this.#byHost.get(host);
    if (sockets === undefined) this.#byHost.set(host, (sockets = new HostSockets()));
    return sockets;
  }

  listenerAt(host: Host, family: Family, ip: string, port: number, path: string): Admitting | null {
    const ports = this.on(host).ports;
    const sock = path !== "" ? ports.paths.get(path) : ports.find("tcp", family, ip, port);
    return sock?.listener ?? null;
  }

  mailboxAt(host: Host, family: Family, ip: string, port: number): Inbox<Letter> | null {
    return this.on(host).ports.find("udp", family, ip, port)?.mailbox ?? null;
  }
}

function hostDown(syscall: string, host: string): NodeJS.ErrnoException {
  return systemError("ENETDOWN", syscall, `the simulated host ${host} is down (crashed)`);
}

/** @internal */
export class SimSocket extends BackendSocket<Backend> implements StreamSocket {
  /** The bound address (`ip`, `port`), or `path` for a Unix socket. */
  ip = "";
  port = 0;
  path = "";
  /** A connecting or connected stream socket's end of the connection. */
  endpoint: Endpoint | null = null;
  /** A listening stream socket's queue of connections. */
  listener: Listener<SimSocket> | null = null;
  /** A bound UDP socket's datagrams, and the tasks in `recvfrom`. */
  mailbox: Inbox<Letter> | null = null;
  /** Whether `ip:port` (or `path`) is taken in the host's namespace. */
  #bound = false;

  constructor(
    kind: SocketKind,
    backend: Backend,
    readonly host: Host,
    /** The sockets of every host. */
    readonly sockets: WorldSockets,
  ) {
    super(kind, backend);
    sockets.on(host).open.add(this);
  }

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

  /** `ip:port` (or the path), for the trace and messages. */
  override toString(): string {
    return this.isUnix ? this.path || "(unnamed)" : `${this.family === 6 ? `[${this.ip}]` : this.ip}:${this.port}`;
  }

  override where(): string {
    return `${this.kind} ${this.toString()}`;
  }

  /** Reads took `n` bytes: the peer's window opens by as much. */
  protected override consumed(n: number): void {
    this.endpoint?.peer?.acknowledge(n);
  }

  /** Bytes dropped unread open the peer's window too. */
  override clear(): void {
    const dropped = this.queued;
    super.clear();
    if (dropped !== 0) this.endpoint?.peer?.acknowledge(dropped);
  }

  /** Takes `ip:port` (or `path`, set first) in the host's namespace. */
  #bind(): void {
    const ports = this.sockets.on(this.host).ports;
    if (this.isUnix) ports.paths.set(this.path, this);
    else ports.bind(this.protocol, this.family, this);
    this.#bound = true;
  }

  /** Frees the socket's address in the host's namespace. */
  unbind(): void {
    if (!this.#bound) return;
    this.#bound = false;
    const ports = this.sockets.on(this.host).ports;
    if (!this.isUnix) ports.unbind(this.protocol, this.family, this);
    else if (ports.paths.get(this.path) === this) ports.paths.delete(this.path);
  }

  /**
   * `bindAndListen`: binds `addr` on its host; a stream socket listens
   * (`backlog` connections at most wait for `accept`), a UDP socket gets its mailbox.
   * @throws EADDRINUSE, EADDRNOTAVAIL…; ENETDOWN on a crashed host.
   */
  listen(addr: Address, backlog: number): void {
    const host = this.host;
    if (!host.up) throw hostDown("bind", host.name);
    const ports = this.sockets.on(host).ports;
    if (this.isUnix) {
      const path = (addr as { path: string }).path;
      if (ports.paths.has(path)) throw systemError("EADDRINUSE", "bind", `${path} is already bound on this simulated host`);
      this.path = path;
    } else {
      const { host: name, port } = addr as InetAddress;
      const ip = this.sockets.network.bindable(host, name, this.family, "bind");
      this.port = ports.choose(this.protocol, this.family, ip, port, "bind");
      this.ip = ip;
    }
    this.#bind();
    if (this.protocol === "udp") {
      this.state = "bound";
      this.mailbox = new Inbox(MAILBOX_SIZE);
    } else {
      this.state = "listening";
      this.listener = new Listener(
        Math.max(1, backlog),
        (syn) => this.#accepted(syn),
        (admitted) => admitted.socket.#closeUnaccepted(),
      );
    }
  }

  /** The server's socket and end of a connection a SYN asks this listener for. */
  #accepted(syn: Syn): Admitted<SimSocket> {
    const sock = new SimSocket(this.kind, this.backend, this.host, this.sockets);
    sock.state = "connected";
    if (this.isUnix) sock.path = this.path;
    else {
      sock.ip = syn.ip;
      sock.port = this.port;
    }
    const end = new Endpoint(sock, this.sockets.network, this.sockets);
    sock.endpoint = end;
    return { socket: sock, end };
  }

  /** A connection nobody accepted, when its listener closes: it is reset. */
  #closeUnaccepted(): void {
    this.state = "closed";
    this.sockets.on(this.host).open.delete(this);
    this.endpoint!.close(true, false);
  }

  /**
   * Starts connecting to `addr` (the SYN leaves), resolved as `to` (null for a Unix path); returns its end.
   * @throws ENOENT for a Unix path nobody bound; ENETDOWN on a crashed host.
   */
  connect(addr: Address, to: Destination | null): Endpoint {
    const host = this.host;
    if (!host.up) throw hostDown("connect", host.name);
    const end = new Endpoint(this, this.sockets.network, this.sockets);
    const ports = this.sockets.on(host).ports;
    if (to === null) {
      const path = (addr as { path: string }).path;
      if (!ports.paths.has(path)) throw systemError("ENOENT", "connect", `no socket is bound at ${path} on this simulated host`);
      this.endpoint = end;
      this.state = "connecting";
      end.open(host, "", 0, path);
      return end;
    }
    const ip = this.sockets.network.source(host, to, this.family);
    this.port = ports.choose("tcp", this.family, ip, 0, "connect");
    this.ip = ip;
    this.#bind();
    this.endpoint = end;
    this.state = "connecting";
    end.open(to.host, to.ip, (addr as InetAddress).port, "");
    return end;
  }

  /**
   * `sendto`: one datagram from this socket (bound on the way if fresh) to `to` at `port`; returns its size.
   * @throws EMSGSIZE past the largest datagram; ENETDOWN on a crashed host.
   */
  send(buf: Uint8Array, off: number, len: number, to: Destination, port: number): number {
    const host = this.host;
    if (!host.up) throw hostDown("sendto", host.name);
    const family = this.family;
    if (len > MAX_DATAGRAM[family]) throw systemError("EMSGSIZE", "sendto", `a UDP datagram carries at most ${MAX_DATAGRAM[family]} bytes`);
    const network = this.sockets.network;
    if (this.state === "fresh") this.listen({ host: wildcardOf(family), port: 0 }, 0);
    const from = this.ip === wildcardOf(family) ? network.source(host, to, family) : this.ip;
    const bytes = new Uint8Array(len);
    bytes.set(buf.subarray(off, off + len));
    new Datagram(network, this.sockets, this, from, to.host, to.ip, port, bytes).send();
    return len;
  }

  /**
   * Closes the socket at once. When its host `crashed`, its peer gets an RST
   * and the tasks waiting on it are not woken: they are being cancelled, and
   * see nothing of the crash.
   */
  closeSocket(crashed: boolean): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.sockets.on(this.host).open.delete(this);
    this.unbind();
    this.endpoint?.close(crashed, !crashed);
    this.listener?.close(!crashed);
    this.mailbox?.close(!crashed);
  }
}
