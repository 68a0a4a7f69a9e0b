/**
 * A socket of the poll backend: a Node handle seen as a file descriptor.
 *
 * Whatever Node delivers stays here, where the kernel would keep it, until a
 * task takes it: the bytes of a connected socket stay in the `net.Socket`'s
 * own buffer (read in paused mode, so Node stops reading from the system
 * when it is full: back-pressure for the peer), accepted connections in
 * `backlog`, datagrams in `datagrams`. Every Node callback records what
 * happened and *touches* the socket for the poller; none of them wakes a
 * task. `isReady` is the socket's answer to `select`'s question, computed
 * from that state alone.
 */
import * as dgram from "node:dgram";
import * as dns from "node:dns";
import * as net from "node:net";
import type { Address, InetAddress, Socket, SocketKind, SocketState } from "@bobbin/unix";
import { SocketFile } from "@bobbin/unix/backend";
import type { Interest, Pollable, Poller, Readiness } from "./poller.js";

/** Datagrams kept for `recvfrom`; later ones are dropped, as a full kernel buffer would. */
const MAX_DATAGRAMS = 1024;

/** A datagram received and not taken yet. */
interface Datagram {
  readonly msg: Buffer;
  readonly from: InetAddress;
}

/** Node's name lookup, as `net` and `dgram` take it in their options. */
type Lookup = NonNullable<net.TcpSocketConnectOpts["lookup"]>;

/**
 * What a socket needs of its backend: the poller to touch, and the list of
 * sockets holding something of Node's.
 *
 * @example
 * ```ts
 * class PollBackend implements Backend, SocketHost { … socket(kind) { return new PollSocket(kind, this, this); } }
 * ```
 */
export interface SocketHost {
  readonly poller: Poller;
  /** The socket holds a Node handle or a lookup now. */
  holding(sock: PollSocket): void;
  /** It holds nothing any more. */
  released(sock: PollSocket): void;
}

/** Runs `fn` after the close callbacks of Node's loop (when a handle closed now is really gone). */
function afterCloseCallbacks(fn: () => void): void {
  // The first immediate runs in this turn's check phase, before the close
  // callbacks; the one it schedules runs in the next turn, after them.
  setImmediate(setImmediate, fn);
}

/**
 * A socket of the poll backend. `@bobbin/unix`'s users see it as an opaque
 * `Socket`; the operations of this backend read and move its state.
 *
 * @example
 * ```ts
 * const sock = new PollSocket("tcp4", backend, backend);
 * sock.isReady("readable");   // what select asks for each interest parked on it
 * ```
 * @throws never from its methods: failures are recorded for the operations to throw.
 */
export class PollSocket implements Socket, Pollable {
  state: SocketState = "fresh";
  readonly interests: Interest[] = [];
  /** Node handles and name lookups of this socket not gone yet. */
  private holds = 0;
  /** A bind or connect is in progress: `writable` waits for its outcome. */
  opening = false;
  /** Why the last bind or connect failed, for its operation. */
  openError: Error | null = null;
  /** A failure after opening (reset by peer, an accept or receive error), for the next operation. */
  error: Error | null = null;
  /** Writes and sends handed to Node whose callback has not come yet. */
  unacknowledged = 0;
  /** A Unix listener's path. */
  path = "";
  /** The name a Unix listener binds first, and its socket file once listening (see `SocketFile`). */
  private staged: string | null = null;
  private file: SocketFile | null = null;

  // A connected stream.
  stream: net.Socket | null = null;
  /** Its end of stream was read. */
  eof = false;
  sendShut = false;
  receiveShut = false;

  // A listener.
  server: net.Server | null = null;
  /** Connections Node accepted and no task took yet. */
  readonly backlog: PollSocket[] = [];

  // A UDP socket.
  udp: dgram.Socket | null = null;
  readonly datagrams: Datagram[] = [];

  private readonly touchFn = (): void => this.host.poller.touch(this);
  /** The callback of every write and send: one fewer unacknowledged, and `writable` may hold. */
  readonly acknowledged = (): void => {
    this.unacknowledged--;
    this.touchFn();
  };

  constructor(
    readonly kind: SocketKind,
    readonly backend: Socket["backend"],
    private readonly host: SocketHost,
  ) {}

  toString(): string {
    return `Socket(${this.kind}, ${this.state}, poll)`;
  }

  /** The poller its operations park with. */
  get poller(): Poller {
    return this.host.poller;
  }

  /** Closed (by `close`, `closeNow`, a finaliser, `using`): its operations fail with `SocketClosed`. */
  get closed(): boolean {
    return this.state === "closed";
  }

  /** Nothing of Node's is left: no handle, no lookup. */
  get released(): boolean {
    return this.holds === 0;
  }

  /** `select`'s question. A closed socket is ready for everything: its waiters wake to `SocketClosed`. */
  isReady(event: Readiness): boolean {
    if (event === "released") return this.holds === 0;
    if (this.state === "closed") return true;
    if (event === "readable") return this.hasInput();
    if (this.opening) return false;
    return this.unacknowledged === 0 || this.error !== null || this.holds === 0;
  }

  private hasInput(): boolean {
    if (this.error !== null) return true;
    if (this.server !== null) return this.backlog.length !== 0;
    if (this.udp !== null) return this.datagrams.length !== 0;
    const stream = this.stream;
    return stream === null || this.receiveShut || this.eof || stream.readableLength !== 0 || stream.destroyed;
  }

  private hold(): void {
    if (this.holds++ === 0) this.host.holding(this);
  }

  private release(): void {
    if (--this.holds !== 0) return;
    this.host.released(this);
    this.touchFn();
  }

  /**
   * `dns.lookup`, counted as part of the socket until it answers: Node cannot
   * cancel one, so closing the socket (and the end of the run) waits for it.
   * `net` and `dgram` call it for names; `listen` below calls it itself.
   */
  readonly lookup: Lookup = (hostname, options, callback) => {
    this.hold();
    dns.lookup(hostname, options, (error, address, family) => {
      callback(error, address as string, family);
      this.release();
    });
  };

  /** The address family to resolve names in. */
  get family(): 4 | 6 {
    return this.kind === "tcp6" || this.kind === "udp6" ? 6 : 4;
  }

  // -- streams ------------------------------------------------------------------

  /** Makes this socket a stream over `stream` (accepted, or about to connect), read in paused mode. */
  attachStream(stream: net.Socket): void {
    this.stream = stream;
    this.hold();
    stream.on("readable", this.touchFn); // also puts the stream in paused mode: it is read by `read()` only
    stream.on("end", () => {
      this.eof = true;
      this.touchFn();
    });
    stream.on("error", (error: Error) => {
      if (this.state === "connecting") this.openError = error;
      else this.error ??= error;
      this.touchFn();
    });
    stream.on("connect", () => {
      if (this.state !== "connecting") return;
      this.state = "connected";
      this.opening = false;
      this.touchFn();
    });
    stream.on("close", () => {
      if (this.state === "connecting") {
        // A failed connect: the socket is fresh again, its handle gone.
        this.state = "fresh";
        this.stream = null;
        this.opening = false;
      }
      this.release();
    });
  }

  // -- listeners ------------------------------------------------------------------

  /** Binds and listens on `addr`; `opening` until Node says how it went. */
  listen(addr: Address, backlog: number): void {
    this.opening = true;
    this.openError = null;
    if ("path" in addr) {
      this.path = addr.path;
      // Node unlinks the name it bound when the server closes, whatever is
      // there by then: bind a fresh name, moved to the path once listening.
      this.staged = SocketFile.staging(addr.path);
      this.listenOn({ path: this.staged ?? addr.path, backlog });
      return;
    }
    if (net.isIP(addr.host) !== 0) {
      this.listenOn({ host: addr.host, port: addr.port, backlog });
      return;
    }
    this.lookup(addr.host, { family: this.family }, (error, ip) => {
      if (this.state === "closed") return;
      if (error !== null) this.openFailed(error);
      else this.listenOn({ host: ip as string, port: addr.port, backlog });
    });
  }

  private listenOn(options: net.ListenOptions): void {
    const server = net.createServer({ allowHalfOpen: true });
    this.server = server;
    this.hold();
    server.on("connection", (stream: net.Socket) => {
      if (this.state === "closed") return void stream.destroy();
      const client = new PollSocket(this.kind, this.backend, this.host);
      client.state = "connected";
      client.attachStream(stream);
      this.backlog.push(client);
      this.touchFn();
    });
    server.on("listening", () => {
      if (this.state === "closed") return;
      if (this.kind === "unix") {
        try {
          this.file = this.staged === null ? SocketFile.bound(this.path) : SocketFile.place(this.staged, this.path);
        } catch (error) {
          server.close();
          this.server = null;
          return afterCloseCallbacks(() => {
            this.release();
            this.openFailed(error as Error);
          });
        }
      }
      this.state = "listening";
      this.opening = false;
      this.touchFn();
    });
    server.on("error", (error: Error) => {
      if (this.state === "closed") return;
      if (this.state === "listening") {
        this.error = error; // accept failed (EMFILE…): the next accept throws it
        this.touchFn();
        return;
      }
      // bind or listen failed: Node closed the handle.
      this.server = null;
      afterCloseCallbacks(() => {
        this.release();
        this.openFailed(error);
      });
    });
    server.listen(options);
  }

  /** A bind or listen failed: the socket is fresh again, and its operation throws `error`. */
  private openFailed(error: Error): void {
    this.openError = error;
    this.opening = false;
    this.touchFn();
  }

  // -- UDP ------------------------------------------------------------------------

  /** The socket's `dgram` handle, made at its first bind or send. */
  datagramSocket(reuseAddr: boolean): dgram.Socket {
    if (this.udp !== null) return this.udp;
    const udp = dgram.createSocket({
      type: this.family === 6 ? "udp6" : "udp4",
      reuseAddr,
      lookup: this.lookup as dgram.SocketOptions["lookup"],
    });
    this.udp = udp;
    this.hold();
    udp.on("message", (msg: Buffer, rinfo: dgram.RemoteInfo) => {
      if (this.datagrams.length >= MAX_DATAGRAMS) return;
      this.datagrams.push({ msg, from: { host: rinfo.address, port: rinfo.port } });
      this.touchFn();
    });
    udp.on("listening", () => {
      if (!this.opening || this.state !== "fresh") return; // bound by a first send: already `bound`
      this.state = "bound";
      this.opening = false;
      this.touchFn();
    });
    udp.on("error", (error: Error) => {
      if (this.state === "closed") return;
      if (!this.opening) {
        this.error = error;
        this.touchFn();
        return;
      }
      // bind failed: drop this handle (a later bind makes another).
      this.udp = null;
      this.closeDatagramSocket(udp, () => this.openFailed(error));
    });
    return udp;
  }

  /** Closes a `dgram` handle; `then` runs once it is gone. */
  private closeDatagramSocket(udp: dgram.Socket, then?: () => void): void {
    try {
      udp.close();
    } catch {
      // closed already
    }
    afterCloseCallbacks(() => {
      this.release();
      then?.();
    });
  }

  // -- closing ----------------------------------------------------------------------

  /** Begins closing: `closed` at once (every waiter is ready, and fails), the Node handles on their way out. */
  closeNow(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.opening = false;
    this.datagrams.length = 0;
    if (this.stream !== null && !this.stream.destroyed) this.stream.destroy();
    const server = this.server;
    if (server !== null) {
      // Only the socket bound here, and before its descriptor closes.
      this.file?.remove();
      this.file = null;
      server.close();
      for (const client of this.backlog.splice(0)) client.closeNow();
      afterCloseCallbacks(() => this.release());
    }
    if (this.udp !== null) this.closeDatagramSocket(this.udp);
    this.touchFn();
  }

  /** `using`: begins closing, as an ownership finaliser does. */
  [Symbol.dispose](): void {
    this.closeNow();
  }
}
