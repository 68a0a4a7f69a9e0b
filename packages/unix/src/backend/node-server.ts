/**
 * A listening socket over Node's `net.Server`, for backends over Node
 * handles: binding (a host name looked up first; a Unix path through a
 * staged name, since Node unlinks the name it bound when the server closes,
 * whatever is there by then), the outcome told to the socket's opener, the
 * connections handed over unread, and the socket's file removed — its own
 * only — before the server closes.
 */
import * as net from "node:net";
import type { Address } from "../contract.js";
import { afterHandleClose, type NodeSocket } from "./node-socket.js";
import { SocketFile } from "./socket-file.js";

/** `error` of a bind under the staged name `staged`, saying `path` instead (the name the program asked for). */
function named(error: Error, staged: string, path: string): Error {
  const e = error as NodeJS.ErrnoException & { address?: string };
  if (e.address === staged) e.address = path;
  e.message = e.message.split(staged).join(path);
  return e;
}

/**
 * What a {@link NodeServer} hands its socket.
 *
 * @example
 * ```ts
 * const events: ServerEvents = {
 *   connection: (stream) => listener.backlog.push(stream),   // a task's accept resumes it
 *   acceptFailed: (error) => (listener.error = error),        // the next accept throws it
 * };
 * ```
 */
export interface ServerEvents {
  /** A connection Node accepted, not read yet (`pauseOnConnect`: `resume()` it once a task accepts it). */
  connection(stream: net.Socket): void;
  /** `accept(2)` failed (EMFILE…): the listener stays. */
  acceptFailed(error: Error): void;
}

/**
 * The `net.Server` of a listening {@link NodeSocket}: `listen` binds and
 * listens — the socket is `listening` and its opener woken, or its opener
 * throws the failure once the server's handle is gone — and `close`
 * removes a Unix socket's file (if it is still the one bound here), closes
 * the server and releases the socket's hold on it once it is gone.
 *
 * @example
 * ```ts
 * bindAndListen(sock: Socket, addr: Address, { backlog }: ListenSettings) {
 *   const s = sock as MySocket;
 *   s.server = new NodeServer(s, { connection: (stream) => s.queue(stream), acceptFailed: (e) => s.fail(e) });
 *   return new OpenOp(s, "bindAndListen", () => s.server!.listen(addr, backlog), () => s.state === "listening");
 * }
 * ```
 * @throws never itself (failures reach the socket's opener and `acceptFailed`).
 */
export class NodeServer {
  readonly server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true });
  /** A Unix listener's path. */
  path = "";
  /** The name a Unix listener binds before its socket is moved to `path`. */
  #staged: string | null = null;
  #file: SocketFile | null = null;
  #listening = false;
  /** The server failed to listen, or was closed: the socket's hold on it is let go already. */
  #done = false;

  constructor(
    private readonly sock: NodeSocket,
    events: ServerEvents,
  ) {
    const server = this.server;
    sock.hold();
    server.on("connection", (stream: net.Socket) => {
      if (sock.state === "closed") stream.destroy();
      else events.connection(stream);
    });
    server.on("listening", () => {
      if (sock.state === "closed") return;
      if (sock.kind === "unix") {
        try {
          this.#file = this.#staged === null ? SocketFile.bound(this.path) : SocketFile.place(this.#staged, this.path);
        } catch (error) {
          server.close();
          return this.#failed(error as Error);
        }
      }
      this.#listening = true;
      sock.state = "listening";
      sock.opened();
    });
    server.on("error", (error: Error) => {
      if (sock.state === "closed") return;
      if (this.#listening) events.acceptFailed(error);
      else this.#failed(error); // bind or listen failed: Node closed the handle
    });
  }

  /** Binds `addr` and listens with `backlog` (Node reads 0 as its default, 511). */
  listen(addr: Address, backlog: number): void {
    const server = this.server;
    if ("path" in addr) {
      this.path = addr.path;
      this.#staged = SocketFile.staging(addr.path);
      server.listen({ path: this.#staged ?? addr.path, backlog });
      return;
    }
    const { host, port } = addr;
    if (net.isIP(host) !== 0) return void server.listen({ host, port, backlog });
    this.sock.lookup(host, (error, ip) => {
      if (this.sock.state === "closed") return;
      if (error === null) return void server.listen({ host: ip, port, backlog });
      // The server never listened: it has no handle to close.
      this.#done = true;
      this.sock.release();
      this.sock.openFailed(error);
    });
  }

  /** bind or listen failed, and the server's handle is closed or closing: the opener throws once it is gone. */
  #failed(error: Error): void {
    this.#done = true;
    const reported = this.#staged === null ? error : named(error, this.#staged, this.path);
    afterHandleClose(() => {
      this.sock.release();
      this.sock.openFailed(reported);
    });
  }

  /** The address it listens on (`{ path }` for a Unix socket), or null before it does. */
  address(): Address | null {
    if (this.sock.kind === "unix") return { path: this.path };
    const a = this.server.address();
    return a !== null && typeof a === "object" ? { host: a.address, port: a.port } : null;
  }

  /** Its descriptor (for `share`), or -1 where Node gives none. */
  get fd(): number {
    const fd = (this.server as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
    return typeof fd === "number" ? fd : -1;
  }

  /** The socket closes: its file goes (before the descriptor), then the server. */
  close(): void {
    if (this.#done) return;
    this.#done = true;
    this.#file?.remove();
    this.#file = null;
    this.server.close();
    this.sock.releaseAfterClose();
  }
}
