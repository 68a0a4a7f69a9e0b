/**
 * Where Node's HTTP server gets its connections. On the libuv backend it
 * listens itself (Node's own sockets are libuv's). On any other backend —
 * native, io_uring, `@bobbin/sim` — the backend's socket listens, a task
 * accepts, and each connection reaches Node's server as a `toStream` stream
 * through its `'connection'` event, pumped by a task of the acceptor.
 */
import type * as http from "node:http";
import * as net from "node:net";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import {
  type Address,
  accept,
  bindAndListen,
  close,
  getsockname,
  type InetAddress,
  lookup,
  type Socket,
  SocketClosed,
  sleep,
  tcpv4,
  tcpv6,
  toStream,
} from "@bobbin/unix";
import { LibuvBackend } from "@bobbin/unix/backend";

/**
 * Where a server of `serve` listens: `onListening` gets it.
 *
 * @example
 * ```ts
 * yield* serve({ port: 0, onListening: ({ host, port }) => console.log(`http://${host}:${port}/`) }, handler);
 * ```
 */
export interface ListeningAddress {
  readonly host: string;
  readonly port: number;
}

/** @internal A server that listens. */
export interface Listening {
  readonly address: ListeningAddress;
  /** Takes no more connections (those it has go on). */
  stopAccepting(): B.Operation<void>;
  /** Closes the connections that carry no request. */
  closeIdle(): void;
  /** Closes every connection and the listener; returns once none is left. */
  close(): B.Operation<void>;
}

/**
 * @internal Makes `server` listen on `host:port`, the way the run's backend
 * allows; `failed` hears of a failure to accept (the server then stops).
 */
export function listen(server: http.Server, host: string, port: number, failed: (error: unknown) => void): B.Operation<Listening> {
  return L.currentEvents() instanceof LibuvBackend ? listenWithNode(server, host, port) : listenWithSockets(server, host, port, failed);
}

/** Node's server listens itself (the libuv backend). */
function* listenWithNode(server: http.Server, host: string, port: number): Generator<B.Instruction, Listening, unknown> {
  let closed = false;
  const gone = new L.Trigger();
  server.once("close", () => {
    closed = true;
    gone.signal();
  });
  // An IP address binds at once (a name would be looked up first, by Node, out of reach of a cancellation).
  const ip = net.isIP(host) === 0 ? (yield* lookup(host)).address : host;
  server.listen(port, ip);
  try {
    yield* B.once(server, "listening"); // or the listen's error (EADDRINUSE…)
  } catch (error) {
    if (server.listening) {
      // Cancelled (or timed out) as it began to listen: it stops.
      server.close();
      if (!closed) yield* gone.wait();
    }
    throw error;
  }
  const { address, port: bound } = server.address() as net.AddressInfo;
  return {
    address: { host: address, port: bound },
    *stopAccepting() {
      if (server.listening) server.close();
    },
    closeIdle: () => server.closeIdleConnections(),
    *close() {
      if (server.listening) server.close();
      server.closeAllConnections();
      if (!closed) yield* gone.wait();
      // 'close' comes before the handle is gone: one turn of Node's loop more.
      yield* B.promise(() => new Promise<void>((resolve) => setImmediate(resolve)));
    },
  };
}

/** The backend's socket listens; a task accepts and hands each connection to Node's server as a stream. */
function* listenWithSockets(
  server: http.Server,
  host: string,
  port: number,
  failed: (error: unknown) => void,
): Generator<B.Instruction, Listening, unknown> {
  const sock = net.isIP(host) === 6 ? tcpv6() : tcpv4();
  try {
    yield* bindAndListen(sock, { host, port });
  } catch (error) {
    yield* close(sock);
    throw error;
  }
  const { host: address, port: bound } = getsockname(sock) as InetAddress;
  // Node tracks a server's connections (idle ones, header and request
  // timeouts) from its 'listening' on: this one's are the acceptor's.
  server.emit("listening");
  const acceptor = B.spawn({ name: "accept" }, acceptLoop, sock, server, failed);
  return {
    address: { host: address, port: bound },
    *stopAccepting() {
      yield* close(sock);
    },
    closeIdle: () => server.closeIdleConnections(),
    *close() {
      yield* close(sock);
      server.close(); // stops Node's tracking of connections (its timer)
      // The acceptor and its connections' tasks are cancelled: each closes its socket (a
      // socket closed under a task may not wake it: a crashed simulated host's does not).
      yield* B.cancel(acceptor);
    },
  };
}

/** Whether accepting failed because the process (or the system) is out of file descriptors. */
function outOfDescriptors(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === "EMFILE" || code === "ENFILE";
}

/**
 * Accepts until the listening socket closes, each connection a stream pumped
 * by a task of this one; then waits for them to end. Out of descriptors, it
 * pauses: the connections wait in the kernel's queue until some are free.
 * Any other failure to accept is the server's: `failed` hears of it.
 */
function* acceptLoop(sock: Socket, server: http.Server, failed: (error: unknown) => void): Generator<B.Instruction, void, unknown> {
  const connections = B.orphans<void>();
  try {
    yield* acceptAll(sock, server, connections);
  } catch (error) {
    if (error instanceof B.Cancelled) throw error;
    failed(error); // the server stops, and fails with it
  }
}

function* acceptAll(sock: Socket, server: http.Server, connections: B.Orphans<void>): Generator<B.Instruction, void, unknown> {
  for (;;) {
    for (let t = B.care(connections); t; t = B.care(connections)) yield* B.awaitExn(t);
    let accepted: [Socket, Address];
    try {
      accepted = yield* accept(sock);
    } catch (error) {
      if (error instanceof SocketClosed) break; // the server takes no more connections
      if (!outOfDescriptors(error)) throw error;
      yield* sleep(0.05);
      continue;
    }
    const [client, peer] = accepted;
    server.emit("connection", toStream(client, { peer, orphans: connections }));
  }
  for (const r of yield* B.drain(connections)) if (!r.ok) throw r.error;
}
