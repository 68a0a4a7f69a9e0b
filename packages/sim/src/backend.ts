/**
 * The simulated backend: `@bobbin/unix`'s backend contract over the world —
 * sockets of the simulated network (`socket.ts`, and per role `stream.ts`,
 * `listener.ts`, `datagram.ts`), `sleep` and deadlines on the virtual clock
 * — and the events half that drives the world. This file holds the
 * contract's entry points. Its `select` never
 * blocks: when every task waits, it moves the clock to the next event and
 * fires what happens then; only a world with nothing left to happen waits
 * (for something outside it, such as a real Promise).
 */
import type * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import type { Address, Backend, Chunk, HostServices, InetAddress, ListenSettings, ShutdownCommand, Socket, SocketKind } from "@bobbin/unix";
import type { DeadlineHandle } from "@bobbin/unix/backend";
import { CallbackEvent } from "./clock.js";
import { realSetImmediate } from "./globals.js";
import type { Host } from "./host.js";
import { AcceptOp, ConnectOp, InstantOp, RecvOp, SendToOp, SleepOp, WriteOp } from "./ops.js";
import { SimSocket, WorldSockets } from "./socket.js";
import type { World } from "./world.js";

const NONE: L.Signal[] = [];

/**
 * A world's services: HTTP clients reach its hosts over its sockets (Node's
 * `fetch` would leave the world), and there are no descriptors or processes.
 */
const SERVICES: HostServices = {
  network: "sockets",
  descriptors:
    "a simulated host has no file descriptors or processes (they would bring the real system, its time and its scheduler into the world): " +
    "run that code outside the simulation, or give the simulated program a stand-in over simulated sockets",
};

/** @internal */
export class SimBackend implements Backend {
  readonly name = "sim";
  readonly services = SERVICES;
  private ready: L.Signal[] = [];
  /** Settles the `select` waiting for something from outside the world. */
  private waiting: ((signals: L.Signal[]) => void) | null = null;

  /** The sockets of every host. */
  readonly sockets: WorldSockets;

  constructor(readonly world: World) {
    this.sockets = new WorldSockets(world.network);
  }

  // -- events --------------------------------------------------------------------

  /** Makes `select` report `s` (the world's root waits on one; operations wake their tasks themselves). */
  signal(s: L.Syscall): void {
    this.ready.push(L.signal(s));
  }

  /**
   * Whether `select` must run: something is to come (a timer, a packet, a
   * lookup) that moves the world, or the world stops its hosts (its root
   * waits for them, not on its syscall, and only `select` sees them stuck).
   */
  pending(): boolean {
    return this.world.clock.pending !== 0 || this.world.lookupsPending || this.world.stopping;
  }

  select(block: boolean): L.Signal[] | Promise<L.Signal[]> {
    const world = this.world;
    // What is due now happens; it wakes tasks directly.
    const moved = world.fireDue();
    const ready = this.takeReady();
    if (!block || ready.length !== 0) return ready;
    // The scheduler asks again after an event that woke nobody only while a
    // task waits on a syscall (the world's root does); otherwise a settled
    // Promise brings it back.
    if (moved) return world.rootWaits ? ready : Promise.resolve(ready);
    // Every task waits. What Node has queued runs first, at this instant:
    // process.nextTick callbacks and Promise reactions, where Node's streams
    // (Node's http over toStream) and B.promise deliver what wakes a task.
    // Only if every task still waits once Node's queues are empty (a turn of
    // its loop) does the world move on.
    world.busy();
    return new Promise((resolve) => {
      this.waiting = resolve;
      realSetImmediate(() => this.whenSettled(resolve));
    });
  }

  /**
   * Node's queues are empty: unless a task was woken meanwhile, pending name
   * lookups are answered, or else the clock moves to the next event; with
   * nothing to come, the world is idle.
   */
  private whenSettled(resolve: (signals: L.Signal[]) => void): void {
    if (this.waiting !== resolve) return;
    const world = this.world;
    if (!world.answerLookups() && !world.advance()) {
      world.idle();
      return;
    }
    // What happened may have woken a task already (interrupt settled the wait).
    if (this.waiting !== resolve) return;
    this.waiting = null;
    resolve(this.takeReady());
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

  private takeReady(): L.Signal[] {
    const ready = this.ready;
    if (ready.length === 0) return NONE;
    this.ready = [];
    return ready;
  }

  // -- sockets -------------------------------------------------------------------

  socket(kind: SocketKind): Socket {
    const host = this.world.currentHost(`${kind === "unix" ? "unixSocket" : kind.replace(/(\d)$/, "v$1")}()`);
    return new SimSocket(kind, this, host, this.sockets);
  }

  bindAndListen(sock: Socket, addr: Address, options: ListenSettings): B.Operation<void> {
    const s = sock as SimSocket;
    return new InstantOp("bindAndListen", () => s.listen(addr, options.backlog));
  }

  accept(sock: Socket): B.Operation<[Socket, Address]> {
    return new AcceptOp(sock as SimSocket);
  }

  connect(sock: Socket, addr: Address): B.Operation<void> {
    return new ConnectOp(this.world, sock as SimSocket, addr);
  }

  /** The socket's kept read, while it is idle (else a new one). */
  read(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<number> {
    return (sock as SimSocket).readOp(buf, off, len);
  }

  /** The delivered segments the socket queued, lent whole. */
  readChunk(sock: Socket): B.Operation<Chunk | null> {
    return (sock as SimSocket).readChunk();
  }

  /** The end's kept write while it is idle, else a new one. */
  write(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<void> {
    const e = (sock as SimSocket).endpoint!;
    let op = (e.writeOp ??= new WriteOp(e));
    if (op.busy) op = new WriteOp(e); // another write of the socket is in progress
    return op.init(buf, off, len);
  }

  recvfrom(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<[number, Address]> {
    return new RecvOp(sock as SimSocket).init(buf, off, len);
  }

  sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address): B.Operation<number> {
    return new SendToOp(this.world, sock as SimSocket, buf, off, len, addr as InetAddress);
  }

  shutdown(sock: Socket, how: ShutdownCommand): void {
    (sock as SimSocket).endpoint!.shutdown(how !== "receive", how !== "send");
  }

  close(sock: Socket): B.Operation<void> {
    const s = sock as SimSocket;
    return new InstantOp("close", () => s.closeSocket(false));
  }

  closeNow(sock: Socket): void {
    (sock as SimSocket).closeSocket(false);
  }

  /** A host crashed: its sockets close (their peers get an RST; their waiters are being cancelled), its ports are free. */
  crashed(host: Host): void {
    const sockets = this.sockets.on(host);
    for (const sock of [...sockets.open]) sock.closeSocket(true);
    sockets.ports.clear();
  }

  localAddress(sock: Socket): Address {
    return (sock as SimSocket).local;
  }

  // -- time ------------------------------------------------------------------------

  now(): number {
    return this.world.clock.now;
  }

  sleep(ms: number): B.Operation<void> {
    return new SleepOp(this.world.clock, ms);
  }

  deadline(at: number, fire: () => void): DeadlineHandle {
    const clock = this.world.clock;
    const event = new CallbackEvent(fire);
    clock.schedule(event, at);
    return { cancel: () => clock.cancel(event) };
  }

  drain(): Promise<void> {
    for (const host of this.world.network.hosts) for (const sock of [...this.sockets.on(host).open]) sock.closeSocket(false);
    this.world.drained();
    return Promise.resolve();
  }
}
