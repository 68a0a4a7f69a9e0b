/**
 * A listening stream socket of the libuv backend: a `net.Server` (the kit's
 * `NodeServer`; or, adopted from another domain, one over a descriptor a
 * relay brought: the kit's `AdoptedServer`), the connections Node accepted
 * and no task took yet, and the tasks in `accept`.
 */
import type * as net from "node:net";
import { NodeServer } from "../backend/node-server.js";
import type { NodeSocket } from "../backend/node-socket.js";
import { AdoptedServer } from "../backend/relay.js";
import type { ShareGuard } from "../backend/sharing.js";
import { WaitQueue } from "../backend/wait-queue.js";
import type { Address, SharedSocket, SocketKind } from "../contract.js";
import type { AcceptOp } from "./ops.js";

/**
 * The most connections a listener holds for `accept`, whatever its backlog:
 * Linux's own cap on a listen queue (`net.core.somaxconn`'s default).
 */
export const MAX_HELD_CONNECTIONS = 4096;

/** @internal A listening socket; `C` is its clients' socket type. */
export class UvListener<C extends NodeSocket> {
  /** Its own server, bound here. */
  own: NodeServer | null = null;
  /** A listener adopted from another domain: its server comes through a relay. */
  adopted: AdoptedServer | null = null;
  /** Connections accepted by Node and not yet by a task. */
  readonly backlog = new Held<C>();
  readonly acceptors = new WaitQueue();
  /** `accept`'s operation, kept while idle (one per listener, not one per connection). */
  acceptOp: AcceptOp | null = null;
  /** An accept failure (EMFILE…) for the next `accept`. */
  acceptError: Error | null = null;
  /** Why this listener can never accept (an adopted listener that could not be set up), for every `accept`. */
  broken: Error | null = null;
  /** The backlog it listens with. */
  listenBacklog = 511;
  /** Made when the listener is first given to another domain; sealed before its descriptor closes. */
  guard: ShareGuard | null = null;

  constructor(
    readonly sock: NodeSocket,
    /** Makes the client socket of a connection Node accepted (connected, not reading yet). */
    private readonly client: (stream: net.Socket) => C,
  ) {}

  get kind(): SocketKind {
    return this.sock.kind;
  }

  /** "127.0.0.1:3000 (listening)" (a dump). */
  describe(): string {
    const a = this.own?.address() ?? this.adopted?.shared.address ?? null;
    const local = a === null ? "" : "path" in a ? a.path : `${a.host}:${a.port}`;
    return `${local || "(unbound)"} (listening)`;
  }

  /** The address it listens on. */
  address(): Address {
    const a = this.own?.address() ?? this.adopted?.shared.address ?? null;
    if (a !== null) return a;
    throw new TypeError(`localAddress(): the ${this.sock.kind} socket is not bound yet`);
  }

  /** Binds and listens on `addr`; the socket's opener hears how it went. */
  listen(addr: Address, backlog: number): void {
    this.listenBacklog = backlog;
    this.own = new NodeServer(this.sock, { connection: (stream) => this.#connection(stream), acceptFailed: (e) => this.#acceptFailed(e) });
    this.own.listen(addr, backlog);
  }

  /**
   * Makes this listener one over the OS socket `shared` describes (from
   * another domain): `listening` at once; a relay process brings a
   * descriptor of its own. A listener whose owner closed it already is `closed`.
   */
  adopt(shared: SharedSocket): void {
    const sock = this.sock;
    this.listenBacklog = shared.backlog;
    this.adopted = new AdoptedServer(shared, sock, {
      serve: (server) => server.on("connection", (stream: net.Socket) => this.#connection(stream)),
      acceptFailed: (error) => this.#acceptFailed(error),
      broken: (error) => {
        if (this.broken !== null || sock.state === "closed") return;
        this.broken = error;
        this.acceptors.wakeAll();
      },
    });
    sock.state = this.adopted.sealed ? "closed" : "listening";
  }

  /** The descriptor it listens on (for `share`), or -1 where Node gives none (yet). */
  get fd(): number {
    return this.adopted !== null ? this.adopted.fd : (this.own?.fd ?? -1);
  }

  /**
   * Queues a connection Node accepted for `accept`, at most `listenBacklog`
   * of them (and {@link MAX_HELD_CONNECTIONS}), unread (reading starts at
   * `accept`). libuv accepts whatever arrives and Node offers no way to
   * stop it on a listening handle, so a connection beyond that bound is
   * closed at once, as a full kernel queue would turn it away: what a client
   * can make this process hold is bounded whether or not the program accepts.
   */
  #connection(stream: net.Socket): void {
    if (this.sock.state === "closed" || this.backlog.length >= Math.min(this.listenBacklog, MAX_HELD_CONNECTIONS)) {
      return void stream.destroy();
    }
    this.backlog.push(this.client(stream));
    this.acceptors.wakeFirst();
  }

  /** accept() failed (EMFILE, ENFILE…): the next accept hears of it. */
  #acceptFailed(error: Error): void {
    this.acceptError = error;
    this.acceptors.wakeFirst();
  }

  /**
   * The oldest connection a task may take, or undefined (wakes the next
   * acceptor if more wait).
   * @throws the accept error (once), or why the listener can never accept.
   */
  take(): C | undefined {
    this.adopted?.want();
    const client = this.backlog.shift();
    if (client !== undefined) {
      if (this.backlog.length !== 0) this.acceptors.wakeFirst();
      return client;
    }
    const error = this.acceptError;
    if (error !== null) {
      this.acceptError = null;
      throw error;
    }
    if (this.broken !== null) throw this.broken;
    return undefined;
  }

  /** The socket closes: acceptors fail, connections not accepted are closed, the server (and its file) goes. */
  closeNow(): void {
    // Domains duplicating the descriptor finish first (see ShareGuard).
    this.guard?.seal();
    for (let client = this.backlog.shift(); client !== undefined; client = this.backlog.shift()) client.backend.closeNow(client);
    this.adopted?.close();
    this.own?.close();
    this.acceptors.wakeAll();
  }
}

/**
 * Connections held for `accept`, oldest first, in a ring kept for the
 * listener's life: an array's `shift` trims its store, so that the `push`
 * of the next connection made a new one — an allocation per connection, the
 * burst of an accept loop's connections coming one at a time.
 */
class Held<C> {
  #ring: (C | undefined)[] = [];
  #first = 0;
  #count = 0;

  get length(): number {
    return this.#count;
  }

  /** Holds `c` after the others. */
  push(c: C): void {
    const size = this.#ring.length;
    if (this.#count === size) this.grow(size);
    const ring = this.#ring;
    ring[(this.#first + this.#count++) % ring.length] = c;
  }

  /** The oldest connection, no longer held; undefined when none is. */
  shift(): C | undefined {
    if (this.#count === 0) return undefined;
    const ring = this.#ring;
    const c = ring[this.#first];
    ring[this.#first] = undefined;
    this.#first = (this.#first + 1) % ring.length;
    this.#count--;
    return c;
  }

  /** The held connections, oldest first. */
  *[Symbol.iterator](): Generator<C> {
    for (let i = 0; i < this.#count; i++) yield this.#ring[(this.#first + i) % this.#ring.length]!;
  }

  /** @internal A ring twice as large (4 at first), the held connections first in it. */
  private grow(size: number): void {
    const ring = new Array<C | undefined>(Math.max(4, 2 * size)).fill(undefined);
    for (let i = 0; i < size; i++) ring[i] = this.#ring[(this.#first + i) % size];
    this.#ring = ring;
    this.#first = 0;
  }
}
