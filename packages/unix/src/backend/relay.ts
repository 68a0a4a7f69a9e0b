/**
 * How a backend over Node's `net` gets a descriptor of its own for a
 * listening socket of another domain (`Backend.adopt`).
 *
 * Node cannot `dup(2)` a descriptor, and two libuv handles over one
 * descriptor are not an option: closing either closes the descriptor under
 * the other (a worker's handle is closed when the worker stops, at the
 * latest), and the number may then be reused by any thread — libuv aborts,
 * or worse, closes someone else's file. So the receiving domain asks a
 * short-lived Node child process for a duplicate: the child inherits the
 * descriptor (as its fd 3), opens it without listening (it accepts nothing)
 * and sends it back over its IPC channel; the descriptor that arrives
 * (`SCM_RIGHTS`) is a new one, owned by this thread. It costs one Node start
 * (≈ 0.1 s) per listening socket and domain, once: `@bobbin/unix` keeps one
 * socket per shared socket and domain.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as net from "node:net";
import type { SharedSocket } from "../contract.js";
import { afterHandleClose, type NodeSocket } from "./node-socket.js";
import { ShareGuard } from "./sharing.js";

/** The child: one message with the handle over fd 3, then exit when the parent lets go. */
const RELAY = `"use strict";
const net = require("node:net");
setTimeout(() => process.exit(3), 30000).unref();
process.on("disconnect", () => process.exit(0));
let handle;
try {
  handle = new net.Socket({ fd: 3, readable: false, writable: false })._handle;
} catch (error) {
  process.send({ error: String((error && (error.code || error.message)) || error) }, () => process.exit(1));
}
if (handle) process.send("@bobbin/unix descriptor", handle, (error) => { if (error) process.exit(2); });`;

/** The message the relay sends with the descriptor. */
const RELAY_MESSAGE = "@bobbin/unix descriptor";

/** A libuv handle as Node's IPC delivers it (a `TCP` or `Pipe` wrap). */
interface RawHandle {
  readonly fd: number;
  close(callback: () => void): void;
}

/**
 * Starts a relay for `fd`. When `spawn` returns, the child holds its own
 * copy of the descriptor (libuv waits for the child's exec), so the caller
 * may let the owner close `fd` from then on.
 * @throws the error of `spawn` when the child could not be started synchronously.
 */
function spawnRelay(fd: number): ChildProcess {
  const env = { ...process.env };
  // The relay is plain Node: no preloads, and not a cluster worker.
  delete env.NODE_OPTIONS;
  delete env.NODE_UNIQUE_ID;
  return spawn(process.execPath, ["-e", RELAY], {
    stdio: ["ignore", "ignore", "ignore", fd, "ipc"],
    env,
    windowsHide: true,
    serialization: "json",
  });
}

/** Why a listener from another domain cannot accept. */
function shareFailed(cause: unknown): Error {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return Object.assign(new Error(`accept(): the listening socket from another domain could not be set up in this one: ${detail}`), {
    code: "ESHARE",
    cause,
  });
}

/**
 * What an {@link AdoptedServer} tells its socket.
 *
 * @example
 * ```ts
 * const hooks: ServerHooks = {
 *   serve: (server) => server.on("connection", (stream) => listener.queue(stream)),
 *   acceptFailed: (error) => listener.fail(error),   // EMFILE…: the next accept hears of it
 *   broken: (error) => listener.break(error),        // every accept hears of it
 * };
 * ```
 */
export interface ServerHooks {
  /** A task wants connections and the descriptor is here: `server` listens on it (handle its `'connection'`s). */
  serve(server: net.Server): void;
  /** `accept(2)` failed on it (EMFILE…): the listener stays. */
  acceptFailed(error: Error): void;
  /** The listener cannot be set up in this domain (the relay failed, `listen(2)` failed): no accept ever will. */
  broken(error: Error): void;
}

/**
 * For `Backend.adopt` over Node's `net`: another domain's listening socket,
 * made this domain's through a relay process (see above). It is `listening`
 * at once; the descriptor arrives a little later, and the socket starts
 * taking connections at its first `accept` only (`want()`), so that a domain
 * that holds a shared socket without accepting takes none. The relay and the
 * descriptor are holds of the socket (see `NodeSocket`): `close()` lets them go.
 *
 * @example
 * ```ts
 * adopt(shared: SharedSocket): Socket {
 *   const s = new MySocket(shared.kind, this);
 *   s.adopted = new AdoptedServer(shared, s, hooksOf(s));
 *   s.state = s.adopted.sealed ? "closed" : "listening";
 *   return s;
 * }
 * // accept's attempt: s.adopted?.want(); …   closing: s.adopted?.close()
 * ```
 * @throws never: failures reach `hooks.broken`.
 */
export class AdoptedServer {
  /** The owner had closed the socket already: the adopted one is `closed` (nothing is held). */
  readonly sealed: boolean;
  /** The server polling the descriptor, once a task accepted and the descriptor arrived. */
  server: net.Server | null = null;
  /** The descriptor, until a task accepts (then it is the server's). */
  #idle: RawHandle | null = null;
  #relay: ChildProcess | null = null;
  #wanted = false;
  #closed = false;

  constructor(
    /** What the sending domain described. */
    readonly shared: SharedSocket,
    private readonly sock: NodeSocket,
    private readonly hooks: ServerHooks,
  ) {
    const guard = ShareGuard.of(shared.guard);
    this.sealed = !guard.pin();
    if (this.sealed) return;
    let relay: ChildProcess;
    try {
      relay = spawnRelay(shared.fd);
    } catch (error) {
      hooks.broken(shareFailed(error));
      return;
    } finally {
      guard.unpin();
    }
    this.#relay = relay;
    sock.hold();
    let delivered = false;
    relay.on("message", (message: unknown, handle: unknown) => {
      if (message === RELAY_MESSAGE && handle != null && !delivered) {
        delivered = true;
        relay.disconnect();
        this.#arrived(handle as RawHandle);
      } else if (message !== null && typeof message === "object" && !delivered) {
        hooks.broken(shareFailed(String((message as { error?: unknown }).error)));
      }
    });
    // Its handles (the process, the IPC channel) are gone once it exited and
    // the channel is closed ('close' never comes after our own disconnect).
    let ended = false;
    const end = (why: string): void => {
      if (ended) return;
      ended = true;
      if (relay.connected) relay.disconnect();
      if (!delivered) hooks.broken(shareFailed(`the relay process ended (${why}) without the descriptor`));
      afterHandleClose(() => {
        this.#relay = null;
        sock.release();
      });
    };
    relay.on("exit", (code: number | null, signal: string | null) => end(signal ?? `code ${code}`));
    relay.on("error", (error: Error) => {
      if (!delivered) hooks.broken(shareFailed(error));
      if (relay.pid === undefined || relay.exitCode !== null || relay.signalCode !== null) end(error.message);
    });
  }

  /** The descriptor: the polling server's, the idle one's, or -1 while it has not arrived. */
  get fd(): number {
    const handle = this.#idle ?? (this.server as unknown as { _handle?: RawHandle | null } | null)?._handle;
    return typeof handle?.fd === "number" ? handle.fd : -1;
  }

  /** A task accepts: take connections from now on (as soon as the descriptor is here). */
  want(): void {
    if (this.#wanted) return;
    this.#wanted = true;
    if (this.#idle !== null) this.#listen();
  }

  /** The socket closes: the descriptor goes (or is dropped when it arrives), the relay is stopped. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const server = this.server;
    const idle = this.#idle;
    this.#idle = null;
    if (server !== null) {
      server.close();
      this.sock.releaseAfterClose();
    } else if (idle !== null) {
      idle.close(() => this.sock.releaseAfterClose());
    }
    this.#relay?.kill();
  }

  /** The descriptor arrived, as a raw libuv handle (TCP or Pipe), not polled yet. */
  #arrived(handle: RawHandle): void {
    this.sock.hold();
    if (this.#closed) {
      handle.close(() => this.sock.releaseAfterClose());
      return;
    }
    this.#idle = handle;
    if (this.#wanted) this.#listen();
  }

  #listen(): void {
    const handle = this.#idle!;
    this.#idle = null;
    const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true });
    this.server = server;
    server.on("error", (error: Error) => {
      if (this.#closed) return;
      // listen(2) failed on the descriptor (Node closed it), or accept(2) failed (EMFILE…).
      if ((server as unknown as { _handle: unknown })._handle === null) this.hooks.broken(error);
      else this.hooks.acceptFailed(error);
    });
    this.hooks.serve(server);
    // What Node's own cluster does with a server handle from another process
    // (`listen(handle)` would open a second handle over a Unix socket's descriptor).
    const s = server as unknown as { _handle: RawHandle | null; _listen2(a: null, p: number, t: number, backlog: number): void };
    s._handle = handle;
    s._listen2(null, -1, -1, this.shared.backlog);
  }
}
