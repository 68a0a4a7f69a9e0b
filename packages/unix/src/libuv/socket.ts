/**
 * The libuv backend's socket: one object for the life of a Bobbin socket,
 * holding whichever Node handle it has become (`net.Server`, `net.Socket`,
 * `dgram.Socket`), what Node callbacks delivered and nobody took yet
 * (chunks, connections, datagrams), and the operations parked on it.
 *
 * Readiness is edge-triggered: a callback queues what arrived and wakes the
 * first waiter; the waiter takes it in its own fiber. A cancelled waiter
 * therefore never loses data: it leaves the queue, and readiness it was
 * handed goes to the next waiter.
 */
import type { ChildProcess } from "node:child_process";
import type * as dgram from "node:dgram";
import * as dns from "node:dns";
import * as net from "node:net";
import type { Address, Socket, SocketKind, SocketState } from "../backend.js";
import { SocketClosed } from "../errors.js";
import { type Parked, wakeAll } from "../parked.js";
import { type SharedSocket, ShareGuard } from "../share.js";
import { SocketFile } from "../socket-file.js";
import type { LibuvBackend } from "./backend.js";
import type { ReadOp, WriteOp } from "./ops.js";
import { RELAY_MESSAGE, spawnRelay } from "./relay.js";

/** Queued bytes above which a stream stops reading from the system (resumed below half of it). */
export const HIGH_WATER = 64 * 1024;
/**
 * The most connections a listener holds for `accept`, whatever its backlog:
 * Linux's own cap on a listen queue (`net.core.somaxconn`'s default).
 */
export const MAX_HELD_CONNECTIONS = 4096;
/** Datagrams kept for `recvfrom`; later ones are dropped, as a full kernel buffer would. */
export const MAX_DATAGRAMS = 1024;

/** A datagram received and not yet taken. */
export interface Datagram {
  readonly msg: Buffer;
  readonly from: Address;
}

/** An operation parked on a socket. */
export type Waiter = Parked<unknown>;

/** A parked write: it is done once `doneSeq` reaches its `seq`. */
export interface WriteWaiter extends Waiter {
  readonly seq: number;
}

/** A libuv handle as Node's IPC delivers it (a `TCP` or `Pipe` wrap). */
interface RawHandle {
  readonly fd: number;
  close(callback: () => void): void;
}

/** Why a listener from another domain cannot accept. */
function shareFailed(cause: unknown): Error {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return Object.assign(new Error(`accept(): the listening socket from another domain could not be set up in this one: ${detail}`), {
    code: "ESHARE",
    cause,
  });
}

/** `host:port` of what `address()` returns, if it is an internet address (an unbound dgram socket throws). */
function endpoint(address: () => unknown): string | null {
  try {
    const a = address() as { address?: unknown; port?: unknown } | null | undefined;
    return typeof a?.address === "string" && typeof a.port === "number" ? `${a.address}:${a.port}` : null;
  } catch {
    return null;
  }
}

/** `error` of a bind under the staged name `staged`, saying `path` instead (the name the program asked for). */
function named(error: Error, staged: string, path: string): Error {
  const e = error as NodeJS.ErrnoException & { address?: string };
  if (e.address === staged) e.address = path;
  e.message = e.message.split(staged).join(path);
  return e;
}

/** Runs `fn` once the handles closed now are really gone (after a "close callbacks" phase of Node's loop). */
export function afterHandleClose(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
}

/** A socket of the libuv backend. */
export class UvSocket implements Socket {
  state: SocketState = "fresh";

  /** "tcp4 127.0.0.1:3000 ← 127.0.0.1:51234", "tcp4 127.0.0.1:3000 (listening)": the socket in dumps. */
  describeEnds(): string {
    if (this.kind === "unix") return `unix ${this.path || "(unbound)"}${this.state === "listening" ? " (listening)" : ""}`;
    const local = endpoint(() => this.server?.address() ?? this.udp?.address() ?? this.stream?.address());
    if (this.stream === null) return `${this.kind} ${local ?? "(unbound)"}${this.state === "listening" ? " (listening)" : ""}`;
    const peer = this.stream.remoteAddress === undefined ? "(connecting)" : `${this.stream.remoteAddress}:${this.stream.remotePort}`;
    return `${this.kind} ${local ?? "(unbound)"} ← ${peer}`;
  }

  /** A Node handle exists and has not finished closing. */
  handleOpen = false;
  /** Name lookups in progress for this socket (see `resolve`). */
  private lookups = 0;

  // -- as a stream (connected TCP or Unix socket) -------------------------
  stream: net.Socket | null = null;
  /** Received chunks not yet read; the first one from `chunkOff`. */
  readonly chunks: Buffer[] = [];
  chunkOff = 0;
  queued = 0;
  paused = false;
  eof = false;
  /** The stream's error (reset by peer…), reported to every later operation. */
  error: Error | null = null;
  sendShut = false;
  receiveShut = false;
  readonly readers: Waiter[] = [];
  readonly writers: WriteWaiter[] = [];
  /** The read and write operations reused while idle. */
  readOp: ReadOp | null = null;
  writeOp: WriteOp | null = null;
  /** Writes handed to Node, and writes Node reported done (callbacks come in order). */
  writeSeq = 0;
  doneSeq = 0;
  /** The error of the last failed write callback, with its sequence number. */
  writeError: Error | null = null;
  writeErrorSeq = 0;
  /** The write callback, bound once. */
  readonly onWritten = (error?: Error | null): void => {
    this.doneSeq++;
    // Node calls back without an error for the writes its destroy() dropped:
    // once the socket is closed, a write is not known to have been sent.
    if (error || this.state === "closed") {
      this.writeError = error ?? new SocketClosed("write()");
      this.writeErrorSeq = this.doneSeq;
    }
    const writers = this.writers;
    while (writers.length !== 0 && writers[0]!.seq <= this.doneSeq) writers.shift()!.ready();
  };

  // -- as a listener --------------------------------------------------------
  server: net.Server | null = null;
  /** Connections accepted by Node and not yet by a task. */
  readonly backlog: UvSocket[] = [];
  readonly acceptors: Waiter[] = [];
  /** An accept failure (EMFILE…) for the next `accept`. */
  acceptError: Error | null = null;
  /** Why this listener can never accept (an adopted listener that could not be set up), for every `accept`. */
  broken: Error | null = null;
  /** A Unix listener's path, for its address. */
  path = "";
  /** The name a Unix listener binds before its socket is moved to `path` (see `SocketFile.staging`). */
  staged: string | null = null;
  /** A Unix listener's socket file, unlinked when it closes (see `SocketFile`). */
  file: SocketFile | null = null;
  /** The backlog it listens with. */
  listenBacklog = 511;
  /** Made when the listener is first given to another domain; sealed before its descriptor closes. */
  guard: ShareGuard | null = null;
  /**
   * A listener adopted from another domain: what it came as. Its `net.Server`
   * arrives later, over a descriptor of its own brought by `relay`.
   */
  origin: SharedSocket | null = null;
  /** The relay process bringing an adopted listener's descriptor, until it exits. */
  relay: ChildProcess | null = null;
  /** An adopted listener's descriptor, until a task accepts (then it is the server's). */
  private idle: RawHandle | null = null;
  /** A task accepted on this adopted listener: it polls its descriptor as soon as it has one. */
  private listenWanted = false;
  /** An adopted listener's Node handles and relay not gone yet (it is live while > 0). */
  private holds = 0;

  // -- as a UDP socket ------------------------------------------------------
  udp: dgram.Socket | null = null;
  readonly datagrams: Datagram[] = [];
  readonly receivers: Waiter[] = [];
  /** `sendto`s waiting for Node's send callback. */
  readonly senders: Waiter[] = [];
  udpError: Error | null = null;

  // -- opening (bind/listen/connect) and closing ----------------------------
  /** The `bindAndListen` or `connect` operation in progress. */
  opener: Waiter | null = null;
  /** Why the last bind/listen/connect failed, for its operation. */
  openError: Error | null = null;
  readonly closers: Waiter[] = [];

  constructor(
    readonly kind: SocketKind,
    readonly backend: LibuvBackend,
  ) {}

  toString(): string {
    return `Socket(${this.kind}, ${this.state})`;
  }

  /** Nothing of the socket is left in Node: no handle, no lookup in progress. */
  get gone(): boolean {
    return !this.handleOpen && this.lookups === 0;
  }

  /**
   * Resolves `host` in the socket's family (for bind, connect, sendto). The
   * lookup is part of the socket until it ends: closing the socket, and the
   * end of the run, wait for it (Node cannot cancel one).
   */
  resolve(host: string, callback: (error: Error | null, ip: string) => void): void {
    this.lookups++;
    this.backend.live.add(this);
    dns.lookup(host, { family: this.kind === "tcp6" || this.kind === "udp6" ? 6 : 4 }, (error, ip) => {
      this.lookups--;
      callback(error, ip);
      this.handleClosed();
    });
  }

  // -- streams ----------------------------------------------------------------

  /** Makes this socket a connected stream over `stream` (accepted, or connecting). */
  attachStream(stream: net.Socket): void {
    this.stream = stream;
    this.handleOpen = true;
    this.backend.live.add(this);
    stream.on("data", (chunk: Buffer) => {
      if (this.stream !== stream || this.receiveShut) return;
      this.chunks.push(chunk);
      this.queued += chunk.length;
      if (this.queued >= HIGH_WATER && !this.paused) {
        this.paused = true;
        stream.pause();
      }
      if (this.readers.length !== 0) this.readers.shift()!.ready();
    });
    stream.on("end", () => {
      if (this.stream !== stream) return;
      this.eof = true;
      wakeAll(this.readers);
    });
    stream.on("error", (error: Error) => {
      if (this.stream !== stream) return;
      if (this.state === "connecting") this.openError = error;
      else if (this.error === null) this.error = error;
      wakeAll(this.readers);
    });
    stream.on("close", () => {
      if (this.stream !== stream) return;
      this.handleOpen = false;
      if (this.state === "connecting") {
        // A failed connect: the socket is fresh again, its handle gone.
        this.stream = null;
        this.state = "fresh";
        this.opener?.ready();
      }
      // Writes whose callbacks will never come fail now.
      if (this.doneSeq < this.writeSeq) {
        this.doneSeq = this.writeSeq;
        this.writeError ??= this.error ?? new Error("the socket closed with writes pending");
        this.writeErrorSeq = this.writeSeq;
      }
      wakeAll(this.writers);
      wakeAll(this.readers);
      this.handleClosed();
    });
  }

  /**
   * Copies up to `len` queued bytes into `buf[off…]`. Returns how many, 0 at
   * the end of the stream, or -1 when nothing is there yet.
   * @throws the stream's error once the queued bytes are consumed.
   */
  take(buf: Uint8Array, off: number, len: number): number {
    if (this.queued === 0) {
      if (this.receiveShut || this.eof) return 0;
      if (this.error !== null) throw this.error;
      return -1;
    }
    const chunks = this.chunks;
    let n = 0;
    while (n < len && chunks.length !== 0) {
      const chunk = chunks[0]!;
      const avail = chunk.length - this.chunkOff;
      const want = len - n;
      if (avail <= want) {
        buf.set(this.chunkOff === 0 ? chunk : chunk.subarray(this.chunkOff), off + n);
        n += avail;
        chunks.shift();
        this.chunkOff = 0;
      } else {
        buf.set(chunk.subarray(this.chunkOff, this.chunkOff + want), off + n);
        n += want;
        this.chunkOff += want;
      }
    }
    this.queued -= n;
    if (this.paused && this.queued < HIGH_WATER / 2 && this.stream !== null) {
      this.paused = false;
      this.stream.resume();
    }
    if (this.queued !== 0 && this.readers.length !== 0) this.readers.shift()!.ready();
    return n;
  }

  /** Passes readiness a cancelled reader did not use to the next reader. */
  wakeReader(): void {
    if (this.readers.length !== 0 && (this.queued !== 0 || this.eof || this.error !== null || this.state === "closed")) {
      this.readers.shift()!.ready();
    }
  }

  // -- listeners ----------------------------------------------------------------

  /** Makes this socket a listener over `server` (before `listen`). */
  attachServer(server: net.Server): void {
    this.server = server;
    this.handleOpen = true;
    this.backend.live.add(this);
    this.onConnections(server);
    server.on("listening", () => {
      if (this.server !== server || this.state === "closed") return;
      if (this.kind === "unix") {
        try {
          this.file = this.staged === null ? SocketFile.bound(this.path) : SocketFile.place(this.staged, this.path);
        } catch (error) {
          server.close();
          return this.listenFailed(error as Error);
        }
      }
      this.state = "listening";
      this.opener?.ready();
    });
    server.on("error", (error: Error) => {
      if (this.server !== server) return;
      if (this.state === "listening") return this.acceptFailed(error);
      if (this.state === "closed") return;
      // bind/listen failed: Node closed the handle.
      this.listenFailed(error);
    });
  }

  /** bind/listen failed, and the server's handle is closed or closing: the socket is fresh again once it is gone. */
  private listenFailed(error: Error): void {
    this.openError = this.staged === null ? error : named(error, this.staged, this.path);
    this.server = null;
    afterHandleClose(() => {
      if (this.server === null && this.udp === null && this.stream === null) this.handleOpen = false;
      this.handleClosed();
      this.opener?.ready();
    });
  }

  /**
   * Queues the connections `server` accepts for `accept`, at most
   * `listenBacklog` of them (and {@link MAX_HELD_CONNECTIONS}), unread (accepted with `pauseOnConnect`: reading
   * starts at `accept`, see {@link takeConnection}). libuv accepts whatever
   * arrives and Node offers no way to stop it on a listening handle, so a
   * connection beyond that bound is closed at once, as a full kernel queue
   * would turn it away: what a client can make this process hold is bounded
   * whether or not the program accepts.
   */
  private onConnections(server: net.Server): void {
    server.on("connection", (stream: net.Socket) => {
      if (this.server !== server || this.state === "closed" || this.backlog.length >= Math.min(this.listenBacklog, MAX_HELD_CONNECTIONS)) {
        return void stream.destroy();
      }
      const client = new UvSocket(this.kind, this.backend);
      client.state = "connected";
      client.attachStream(stream);
      this.backlog.push(client);
      if (this.acceptors.length !== 0) this.acceptors.shift()!.ready();
    });
  }

  /** The oldest connection waiting for `accept`, reading from now on; or undefined. */
  takeConnection(): UvSocket | undefined {
    const client = this.backlog.shift();
    if (client !== undefined) client.stream!.resume();
    return client;
  }

  /** accept() failed (EMFILE, ENFILE…): the next accept hears of it. */
  private acceptFailed(error: Error): void {
    this.acceptError = error;
    if (this.acceptors.length !== 0) this.acceptors.shift()!.ready();
  }

  /** An adopted listener cannot be set up: every accept hears of it. */
  private breakDown(error: Error): void {
    if (this.broken !== null || this.state === "closed") return;
    this.broken = error;
    wakeAll(this.acceptors);
  }

  // -- listeners from other domains ---------------------------------------------

  /**
   * Makes this fresh socket a listener over the OS socket `shared` describes
   * (from another domain): `listening` at once; a relay process brings a
   * descriptor of its own, and connections are accepted from then on.
   * `accept` waits meanwhile. When the owner already closed it, the socket
   * is `closed`.
   */
  adopt(shared: SharedSocket): void {
    this.origin = shared;
    this.listenBacklog = shared.backlog;
    if (this.kind === "unix") this.path = (shared.address as { path: string }).path;
    const guard = ShareGuard.of(shared.guard);
    if (!guard.pin()) {
      this.state = "closed";
      return;
    }
    this.state = "listening";
    let relay: ChildProcess;
    try {
      relay = spawnRelay(shared.fd);
    } catch (error) {
      this.breakDown(shareFailed(error));
      return;
    } finally {
      guard.unpin();
    }
    this.relay = relay;
    this.hold();
    let delivered = false;
    relay.on("message", (message: unknown, handle: unknown) => {
      if (message === RELAY_MESSAGE && handle != null && !delivered) {
        delivered = true;
        relay.disconnect();
        this.adoptHandle(handle as RawHandle);
      } else if (message !== null && typeof message === "object" && !delivered) {
        this.breakDown(shareFailed(String((message as { error?: unknown }).error)));
      }
    });
    // Its handles (the process, the IPC channel) are gone once it exited and
    // the channel is closed ('close' never comes after our own disconnect).
    let ended = false;
    const end = (why: string): void => {
      if (ended) return;
      ended = true;
      if (relay.connected) relay.disconnect();
      if (!delivered) this.breakDown(shareFailed(`the relay process ended (${why}) without the descriptor`));
      afterHandleClose(() => {
        this.relay = null;
        this.release();
      });
    };
    relay.on("exit", (code: number | null, signal: string | null) => end(signal ?? `code ${code}`));
    relay.on("error", (error: Error) => {
      if (!delivered) this.breakDown(shareFailed(error));
      if (relay.pid === undefined || relay.exitCode !== null || relay.signalCode !== null) end(error.message);
    });
  }

  /** An adopted listener's own descriptor arrived, as a raw libuv handle (TCP or Pipe), not polled yet. */
  private adoptHandle(handle: RawHandle): void {
    this.hold();
    if (this.state === "closed") {
      // Closed while the relay worked: drop the descriptor.
      handle.close(() => afterHandleClose(() => this.release()));
      return;
    }
    this.idle = handle;
    if (this.listenWanted) this.listenIdle();
  }

  /**
   * A task accepts: make sure this domain takes connections. An adopted
   * listener starts polling its descriptor at its first `accept` only, so a
   * domain that holds a shared socket without accepting takes no connection.
   */
  wantConnections(): void {
    if (this.listenWanted) return;
    this.listenWanted = true;
    if (this.idle !== null) this.listenIdle();
  }

  private listenIdle(): void {
    const handle = this.idle!;
    this.idle = null;
    const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true });
    this.server = server;
    this.onConnections(server);
    server.on("error", (error: Error) => {
      if (this.server !== server || this.state === "closed") return;
      // listen(2) failed on the descriptor (Node closed it), or accept(2) failed (EMFILE…).
      if ((server as unknown as { _handle: unknown })._handle === null) this.breakDown(error);
      else this.acceptFailed(error);
    });
    // What Node's own cluster does with a server handle from another process
    // (`listen(handle)` would open a second handle over a Unix socket's descriptor).
    const s = server as unknown as { _handle: RawHandle | null; _listen2(a: null, p: number, t: number, backlog: number): void };
    s._handle = handle;
    s._listen2(null, -1, -1, this.listenBacklog);
  }

  /** An adopted listener's descriptor: the polling server's, or the idle handle's. */
  get adoptedFd(): number {
    const handle = this.idle ?? (this.server as unknown as { _handle?: RawHandle | null } | null)?._handle;
    return typeof handle?.fd === "number" ? handle.fd : -1;
  }

  private hold(): void {
    this.holds++;
    if (!this.handleOpen) {
      this.handleOpen = true;
      this.backend.live.add(this);
    }
  }

  private release(): void {
    if (--this.holds !== 0) return;
    this.handleOpen = false;
    this.handleClosed();
  }

  /** Passes readiness a cancelled acceptor did not use to the next acceptor. */
  wakeAcceptor(): void {
    if (
      this.acceptors.length !== 0 &&
      (this.backlog.length !== 0 || this.acceptError !== null || this.broken !== null || this.state === "closed")
    ) {
      this.acceptors.shift()!.ready();
    }
  }

  // -- UDP ------------------------------------------------------------------------

  /** Makes this socket a UDP socket over `udp`. */
  attachUdp(udp: dgram.Socket): void {
    this.udp = udp;
    this.handleOpen = true;
    this.backend.live.add(this);
    udp.on("message", (msg: Buffer, rinfo: dgram.RemoteInfo) => {
      if (this.udp !== udp) return;
      if (this.datagrams.length >= MAX_DATAGRAMS) return;
      this.datagrams.push({ msg, from: { host: rinfo.address, port: rinfo.port } });
      if (this.receivers.length !== 0) this.receivers.shift()!.ready();
    });
    udp.on("listening", () => {
      if (this.udp !== udp || this.state === "closed") return;
      this.state = "bound";
      this.opener?.ready();
    });
    udp.on("error", (error: Error) => {
      if (this.udp !== udp || this.state === "closed") return;
      if (this.opener !== null && this.state === "fresh") {
        // bind failed: drop this handle (a later bind makes a new one) and report once it is gone.
        this.openError = error;
        this.udp = null;
        try {
          udp.close();
        } catch {
          // already closed
        }
        afterHandleClose(() => {
          if (this.udp === null && this.server === null && this.stream === null) this.handleOpen = false;
          this.handleClosed();
          this.opener?.ready();
        });
        return;
      }
      this.udpError = error;
      if (this.receivers.length !== 0) this.receivers.shift()!.ready();
    });
  }

  /** Passes readiness a cancelled receiver did not use to the next receiver. */
  wakeReceiver(): void {
    if (this.receivers.length !== 0 && (this.datagrams.length !== 0 || this.udpError !== null || this.state === "closed")) {
      this.receivers.shift()!.ready();
    }
  }

  // -- closing ------------------------------------------------------------------------

  /** Begins closing: state `closed`, every waiter woken (they fail with `SocketClosed`). */
  closeNow(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.chunks.length = 0;
    this.queued = 0;
    this.datagrams.length = 0;
    const stream = this.stream;
    const server = this.server;
    const udp = this.udp;
    if (stream !== null) {
      if (this.handleOpen) stream.destroy();
    } else if (server !== null) {
      // Domains duplicating the descriptor finish first (see ShareGuard).
      this.guard?.seal();
      // Unlinked before the descriptor closes, as libuv does: a socket bound at
      // the path by someone else once ours is closed is never touched.
      this.file?.remove();
      this.file = null;
      server.close();
      for (const client of this.backlog.splice(0)) client.closeNow();
      this.relay?.kill();
      afterHandleClose(() => {
        if (this.origin !== null) return this.release();
        this.handleOpen = false;
        this.handleClosed();
      });
    } else if (this.idle !== null) {
      // An adopted listener that never accepted.
      this.guard?.seal();
      const idle = this.idle;
      this.idle = null;
      idle.close(() => afterHandleClose(() => this.release()));
      this.relay?.kill();
    } else if (this.relay !== null) {
      // An adopted listener whose descriptor has not arrived: it is dropped when it does.
      this.relay.kill();
    } else if (udp !== null) {
      try {
        udp.close();
      } catch {
        // already closed by an error
      }
      afterHandleClose(() => {
        this.handleOpen = false;
        this.handleClosed();
      });
    } else {
      this.handleOpen = false;
      this.handleClosed();
    }
    wakeAll(this.readers);
    wakeAll(this.writers);
    wakeAll(this.acceptors);
    wakeAll(this.receivers);
    wakeAll(this.senders);
    this.opener?.ready();
  }

  /** `using`: begins closing, as an ownership finaliser does. */
  [Symbol.dispose](): void {
    this.closeNow();
  }

  private handleClosed(): void {
    if (!this.gone) return;
    wakeAll(this.closers);
    this.backend.handleGone(this);
  }
}
