/**
 * The simulated backend: `@bobbin/unix`'s backend contract over the world —
 * sockets of the simulated network, `sleep` and deadlines on the virtual
 * clock — and the events half that drives the world. Its `select` never
 * blocks: when every task waits, it moves the clock to the next event and
 * fires what happens then; only a world with nothing left to happen waits
 * (for something outside it, such as a real Promise).
 */
import * as B from "@bobbin/core";
import type { Address, Backend, InetAddress, ListenOptions, ShutdownCommand, Socket, SocketKind } from "@bobbin/unix";
import { type DeadlineHandle, systemError } from "@bobbin/unix/backend";
import { wildcardOf } from "./address.js";
import { CallbackEvent } from "./clock.js";
import { Datagram, MAILBOX_SIZE } from "./datagram.js";
import { Inbox } from "./inbox.js";
import { Listener } from "./listener.js";
import { Lookup } from "./lookup.js";
import type { Destination } from "./network.js";
import { AcceptOp, ConnectOp, InstantOp, ReadOp, RecvOp, SendtoOp, SleepOp, WriteOp } from "./ops.js";
import { SimSocket } from "./socket.js";
import { Endpoint } from "./stream.js";
import type { World } from "./world.js";

const NONE: B.Signal[] = [];
/** The largest UDP payload (IPv4, IPv6). */
const MAX_DATAGRAM = { 4: 65507, 6: 65527 } as const;

/** @internal */
export class SimBackend implements Backend {
  readonly name = "sim";
  private ready: B.Signal[] = [];
  /** Settles the `select` waiting for something from outside the world. */
  private waiting: ((signals: B.Signal[]) => void) | null = null;

  constructor(readonly world: World) {}

  // -- events --------------------------------------------------------------------

  /** Makes `select` report `s` (the world's root waits on one; operations wake their tasks themselves). */
  signal(s: B.Syscall): void {
    this.ready.push(B.signal(s));
  }

  /** Whether `select` must run: something is to come (a timer, a packet, a lookup) that moves the world. */
  pending(): boolean {
    return this.world.clock.pending !== 0 || this.world.lookupsPending;
  }

  select(block: boolean): B.Signal[] | Promise<B.Signal[]> {
    const world = this.world;
    // What is due now happens; when every task waits, pending name lookups
    // are answered, or else the clock moves to the next event. What happens
    // wakes tasks directly.
    let moved = world.fireDue();
    if (!moved && block) moved = world.answerLookups() || world.advance();
    const ready = this.takeReady();
    if (!block || ready.length !== 0) return ready;
    // The scheduler asks again after an answer that woke nobody only while a
    // task waits on a syscall (the world's root does); otherwise a settled
    // Promise brings it back.
    if (moved) return world.rootWaits ? ready : Promise.resolve(ready);
    return new Promise((resolve) => {
      this.waiting = resolve;
      world.idle();
    });
  }

  interrupt(): void {
    const resolve = this.waiting;
    if (resolve === null) return;
    this.waiting = null;
    resolve(this.takeReady());
  }

  /** Whether `select` waits for something from outside the world. */
  get isWaiting(): boolean {
    return this.waiting !== null;
  }

  finaliser(): void {
    this.interrupt();
  }

  private takeReady(): B.Signal[] {
    const ready = this.ready;
    if (ready.length === 0) return NONE;
    this.ready = [];
    return ready;
  }

  // -- sockets -------------------------------------------------------------------

  socket(kind: SocketKind): Socket {
    const host = this.world.currentHost(`${kind === "unix" ? "unixSocket" : kind.replace(/(\d)$/, "v$1")}()`);
    const sock = new SimSocket(kind, this, host);
    host.sockets.add(sock);
    return sock;
  }

  bindAndListen(sock: Socket, addr: Address, options: Required<ListenOptions>): B.Operation<void> {
    const s = sock as SimSocket;
    return new InstantOp("bindAndListen", () => this.bind(s, addr, options.backlog));
  }

  private bind(sock: SimSocket, addr: Address, backlog: number): void {
    const host = sock.host;
    if (!host.up) throw hostDown("bind", host.name);
    if (sock.isUnix) {
      const path = (addr as { path: string }).path;
      if (host.ports.paths.has(path)) throw systemError("EADDRINUSE", "bind", `${path} is already bound on this simulated host`);
      sock.path = path;
    } else {
      const { host: name, port } = addr as InetAddress;
      const ip = this.world.network.bindable(host, name, sock.family, "bind");
      sock.port = host.ports.choose(sock.protocol, sock.family, ip, port, "bind");
      sock.ip = ip;
    }
    sock.bind();
    if (sock.protocol === "udp") {
      sock.state = "bound";
      sock.mailbox = new Inbox(MAILBOX_SIZE);
    } else {
      sock.state = "listening";
      sock.listener = new Listener(sock, Math.max(1, backlog));
    }
  }

  accept(sock: Socket): B.Operation<[Socket, Address]> {
    return new AcceptOp(sock as SimSocket);
  }

  connect(sock: Socket, addr: Address): B.Operation<void> {
    return new ConnectOp(this, sock as SimSocket, addr);
  }

  /**
   * Starts connecting `sock` to `addr` (the SYN leaves), resolved as `to` (null for a Unix path); returns its endpoint.
   * @throws ENOENT for a Unix path nobody bound; ENETDOWN on a crashed host.
   */
  startConnect(sock: SimSocket, addr: Address, to: Destination | null): Endpoint {
    const host = sock.host;
    if (!host.up) throw hostDown("connect", host.name);
    const endpoint = new Endpoint(sock, this.world.network);
    if (to === null) {
      const path = (addr as { path: string }).path;
      if (!host.ports.paths.has(path)) throw systemError("ENOENT", "connect", `no socket is bound at ${path} on this simulated host`);
      sock.endpoint = endpoint;
      sock.state = "connecting";
      endpoint.open(host, "", 0, path);
      return endpoint;
    }
    const ip = this.world.network.source(host, to, sock.family);
    sock.port = host.ports.choose("tcp", sock.family, ip, 0, "connect");
    sock.ip = ip;
    sock.bind();
    sock.endpoint = endpoint;
    sock.state = "connecting";
    endpoint.open(to.host, to.ip, (addr as InetAddress).port, "");
    return endpoint;
  }

  /** A lookup of `addr`'s host from `sock`'s host, for `connect` or `sendto`. */
  lookup(sock: SimSocket, addr: InetAddress, syscall: string): Lookup {
    return new Lookup(this.world, sock.host, addr.host, sock.family, syscall);
  }

  read(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<number> {
    const e = (sock as SimSocket).endpoint!;
    let op = e.readOp;
    if (op === null) op = e.readOp = new ReadOp(e);
    else if (op.busy) op = new ReadOp(e); // another read of the socket is in progress
    return op.init(buf, off, len);
  }

  write(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<void> {
    const e = (sock as SimSocket).endpoint!;
    let op = e.writeOp;
    if (op === null) op = e.writeOp = new WriteOp(e);
    else if (op.busy) op = new WriteOp(e); // another write of the socket is in progress
    return op.init(buf, off, len);
  }

  recvfrom(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<[number, Address]> {
    return new RecvOp(sock as SimSocket, buf, off, len);
  }

  sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address): B.Operation<number> {
    return new SendtoOp(this, sock as SimSocket, buf, off, len, addr as InetAddress);
  }

  /** Sends one datagram from `sock` (bound on the way if fresh) to `to` at `port`; returns its size. */
  sendDatagram(sock: SimSocket, buf: Uint8Array, off: number, len: number, to: Destination, port: number): number {
    const host = sock.host;
    if (!host.up) throw hostDown("sendto", host.name);
    const family = sock.family;
    if (len > MAX_DATAGRAM[family]) throw systemError("EMSGSIZE", "sendto", `a UDP datagram carries at most ${MAX_DATAGRAM[family]} bytes`);
    const network = this.world.network;
    if (sock.state === "fresh") this.bind(sock, { host: wildcardOf(family), port: 0 }, 0);
    const from = sock.ip === wildcardOf(family) ? network.source(host, to, family) : sock.ip;
    const bytes = new Uint8Array(len);
    bytes.set(buf.subarray(off, off + len));
    new Datagram(network, sock, from, to.host, to.ip, port, bytes).send();
    return len;
  }

  shutdown(sock: Socket, how: ShutdownCommand): void {
    (sock as SimSocket).endpoint!.shutdown(how !== "receive", how !== "send");
  }

  close(sock: Socket): B.Operation<void> {
    const s = sock as SimSocket;
    return new InstantOp("close", () => this.closeSocket(s, false));
  }

  closeNow(sock: Socket): void {
    this.closeSocket(sock as SimSocket, false);
  }

  /**
   * Closes `sock` at once. When its host `crashed`, its peer gets an RST and
   * the tasks waiting on it are not woken: they are being cancelled, and see
   * nothing of the crash.
   */
  closeSocket(sock: SimSocket, crashed: boolean): void {
    if (sock.state === "closed") return;
    sock.state = "closed";
    sock.host.sockets.delete(sock);
    sock.unbind();
    sock.endpoint?.close(crashed, !crashed);
    sock.listener?.close(!crashed);
    sock.mailbox?.close(!crashed);
  }

  localAddress(sock: Socket): Address {
    return (sock as SimSocket).local;
  }

  // -- time ------------------------------------------------------------------------

  now(): number {
    return this.world.clock.now;
  }

  sleep(ms: number): B.Operation<void> {
    return new SleepOp(this, ms);
  }

  deadline(at: number, fire: () => void): DeadlineHandle {
    const clock = this.world.clock;
    const event = new CallbackEvent(fire);
    clock.schedule(event, at);
    return { cancel: () => clock.cancel(event) };
  }

  drain(): Promise<void> {
    for (const host of this.world.network.hosts) for (const sock of [...host.sockets]) this.closeSocket(sock, false);
    this.world.drained();
    return Promise.resolve();
  }
}

function hostDown(syscall: string, host: string): NodeJS.ErrnoException {
  return systemError("ENETDOWN", syscall, `the simulated host ${host} is down (crashed)`);
}
