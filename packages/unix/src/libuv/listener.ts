/**
 * A listening stream socket of the libuv backend: a `net.Server` (or,
 * adopted from another domain, one over a descriptor a relay brought), the
 * connections Node accepted and no task took yet, and the tasks in `accept`.
 */
import * as net from "node:net";
import { afterHandleClose, type NodeSocket } from "../backend/node-socket.js";
import { AdoptedServer } from "../backend/relay.js";
import type { ShareGuard } from "../backend/sharing.js";
import { SocketFile } from "../backend/socket-file.js";
import { WaitQueue } from "../backend/wait-queue.js";
import type { Address, InetAddress, SharedSocket, SocketKind } from "../contract.js";

/**
 * The most connections a listener holds for `accept`, whatever its backlog:
 * Linux's own cap on a listen queue (`net.core.somaxconn`'s default).
 */
export const MAX_HELD_CONNECTIONS = 4096;

/** `error` of a bind under the staged name `staged`, saying `path` instead (the name the program asked for). */
function named(error: Error, staged: string, path: string): Error {
  const e = error as NodeJS.ErrnoException & { address?: string };
  if (e.address === staged) e.address = path;
  e.message = e.message.split(staged).join(path);
  return e;
}

/** @internal A listening socket; `C` is its clients' socket type. */
export class UvListener<C extends NodeSocket> {
  /** The server, once listening (an adopted one: once a task accepted and the descriptor arrived). */
  server: net.Server | null = null;
  /** Connections accepted by Node and not yet by a task. */
  readonly backlog: C[] = [];
  readonly acceptors = new WaitQueue();
  /** An accept failure (EMFILE…) for the next `accept`. */
  acceptError: Error | null = null;
  /** Why this listener can never accept (an adopted listener that could not be set up), for every `accept`. */
  broken: Error | null = null;
  /** A Unix listener's path, for its address. */
  path = "";
  /** The backlog it listens with. */
  listenBacklog = 511;
  /** Made when the listener is first given to another domain; sealed before its descriptor closes. */
  guard: ShareGuard | null = null;
  /** A listener adopted from another domain: its server comes through a relay. */
  adopted: AdoptedServer | null = null;
  /** The name a Unix listener binds before its socket is moved to `path` (see `SocketFile.staging`). */
  #staged: string | null = null;
  /** A Unix listener's socket file, unlinked when it closes. */
  #file: SocketFile | null = null;

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
    const a = this.sock.kind === "unix" ? null : endpointOf(this.server);
    const local = this.sock.kind === "unix" ? this.path : a === null ? "" : `${a.host}:${a.port}`;
    return `${local || "(unbound)"} (listening)`;
  }

  /** The address it listens on. */
  address(): Address {
    if (this.sock.kind === "unix") return { path: this.path };
    const a = endpointOf(this.server);
    if (a !== null) return a;
    if (this.adopted !== null) return this.adopted.shared.address; // its descriptor not here yet
    throw new TypeError(`localAddress(): the ${this.sock.kind} socket is not bound yet`);
  }

  /** Binds and listens on `addr` (a host name is looked up first); the socket's opener hears how it went. */
  listen(addr: Address, backlog: number): void {
    const sock = this.sock;
    const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true });
    this.server = server;
    sock.hold();
    this.#serve(server);
    server.on("listening", () => {
      if (this.server !== server || sock.state === "closed") return;
      if (sock.kind === "unix") {
        try {
          this.#file = this.#staged === null ? SocketFile.bound(this.path) : SocketFile.place(this.#staged, this.path);
        } catch (error) {
          server.close();
          return this.#listenFailed(error as Error);
        }
      }
      sock.state = "listening";
      sock.opened();
    });
    server.on("error", (error: Error) => {
      if (this.server !== server || sock.state === "closed") return;
      if (sock.state === "listening") return this.#acceptFailed(error);
      this.#listenFailed(error); // bind or listen failed: Node closed the handle
    });
    this.listenBacklog = backlog;
    if ("path" in addr) {
      this.path = addr.path;
      // libuv unlinks the name it bound when the server closes, whatever is
      // there by then: it binds a fresh name, moved to the path once listening.
      this.#staged = SocketFile.staging(addr.path);
      server.listen({ path: this.#staged ?? addr.path, backlog });
      return;
    }
    const { host, port } = addr;
    if (net.isIP(host) !== 0) return void server.listen({ host, port, backlog });
    sock.lookup(host, (error, ip) => {
      if (this.server !== server || sock.state === "closed") return;
      if (error === null) return void server.listen({ host: ip, port, backlog });
      // The server never listened: it has no handle to close.
      this.server = null;
      sock.release();
      sock.openFailed(error);
    });
  }

  /** bind or listen failed, and the server's handle is closed or closing: the socket is fresh again once it is gone. */
  #listenFailed(error: Error): void {
    const sock = this.sock;
    this.server = null;
    const reported = this.#staged === null ? error : named(error, this.#staged, this.path);
    afterHandleClose(() => {
      sock.release();
      sock.openFailed(reported);
    });
  }

  /**
   * Makes this listener one over the OS socket `shared` describes (from
   * another domain): `listening` at once; a relay process brings a
   * descriptor of its own. A listener whose owner closed it already is `closed`.
   */
  adopt(shared: SharedSocket): void {
    const sock = this.sock;
    this.listenBacklog = shared.backlog;
    if (sock.kind === "unix") this.path = (shared.address as { path: string }).path;
    this.adopted = new AdoptedServer(shared, sock, {
      serve: (server) => {
        this.server = server;
        this.#serve(server);
      },
      acceptFailed: (error) => this.#acceptFailed(error),
      broken: (error) => {
        if (this.broken !== null || sock.state === "closed") return;
        this.broken = error;
        this.acceptors.wakeAll();
      },
    });
    sock.state = this.adopted.sealed ? "closed" : "listening";
  }

  /** The descriptor it listens on (for `share`), or -1 where Node gives none. */
  get fd(): number {
    if (this.adopted !== null) return this.adopted.fd;
    const fd = (this.server as unknown as { _handle?: { fd?: unknown } } | null)?._handle?.fd;
    return typeof fd === "number" ? fd : -1;
  }

  /**
   * Queues the connections `server` accepts for `accept`, at most
   * `listenBacklog` of them (and {@link MAX_HELD_CONNECTIONS}), unread
   * (accepted with `pauseOnConnect`: reading starts at `accept`). libuv
   * accepts whatever arrives and Node offers no way to stop it on a
   * listening handle, so a connection beyond that bound is closed at once,
   * as a full kernel queue would turn it away: what a client can make this
   * process hold is bounded whether or not the program accepts.
   */
  #serve(server: net.Server): void {
    server.on("connection", (stream: net.Socket) => {
      if (this.server !== server || this.sock.state === "closed") return void stream.destroy();
      if (this.backlog.length >= Math.min(this.listenBacklog, MAX_HELD_CONNECTIONS)) return void stream.destroy();
      this.backlog.push(this.client(stream));
      this.acceptors.wakeFirst();
    });
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

  /** The socket closes: acceptors fail, connections not accepted are closed, the server and its file go. */
  closeNow(): void {
    // Domains duplicating the descriptor finish first (see ShareGuard).
    this.guard?.seal();
    // Unlinked before the descriptor closes, as libuv does: a socket bound at
    // the path by someone else once ours is closed is never touched.
    this.#file?.remove();
    this.#file = null;
    for (const client of this.backlog.splice(0)) client.backend.closeNow(client);
    if (this.adopted !== null) this.adopted.close();
    else if (this.server !== null) {
      this.server.close();
      this.sock.releaseAfterClose();
    }
    this.acceptors.wakeAll();
  }
}

/** `{ host, port }` of a listening server, or null. */
function endpointOf(server: net.Server | null): InetAddress | null {
  const a = server?.address();
  return a != null && typeof a === "object" ? { host: a.address, port: a.port } : null;
}
