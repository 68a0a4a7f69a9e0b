/**
 * A TLS echo server and its client, written as the book's echo server is:
 * Node's `tls` makes and secures the connections, and `fromStream` turns
 * each one into a Bobbin socket, read and written by fibers with `read`,
 * `write`, `shutdown` and `close`.
 *
 * Node's server accepts connections on its own (a callback per connection);
 * `Connections` queues them for the accepting task, which takes them one at
 * a time as it would with `accept`.
 */
import type { AddressInfo } from "node:net";
import * as tls from "node:tls";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { close, fromStream, type InetAddress, read, type Socket, shutdown, write } from "@bobbin/unix";
import type { SelfSigned } from "../support/self-signed.js";

/** The connections a `tls.Server` accepted (handshake done) that no task has taken yet. */
export class Connections implements Disposable {
  private readonly queue: tls.TLSSocket[] = [];
  private waiter: L.Trigger | null = null;
  private disposed = false;
  private readonly onConnection = (socket: tls.TLSSocket): void => {
    // A handshake that ends after the stop: the server waits for that connection too.
    if (this.disposed) return void socket.destroy();
    this.queue.push(socket);
    this.waiter?.signal();
  };

  constructor(server: tls.Server) {
    server.on("secureConnection", this.onConnection);
  }

  /**
   * The next connection, as a socket (waits for one).
   *
   * @example
   * ```ts
   * const client = yield* connections.accept();
   * ```
   */
  *accept(): Generator<B.Instruction, Socket, unknown> {
    while (this.queue.length === 0) {
      this.waiter = new L.Trigger();
      try {
        yield* this.waiter.wait();
      } finally {
        this.waiter = null;
      }
    }
    return fromStream(this.queue.shift()!);
  }

  /** Closes the connections no task took, and those whose handshake ends later. */
  [Symbol.dispose](): void {
    this.disposed = true;
    for (const socket of this.queue.splice(0)) socket.destroy();
  }
}

/** A listening TLS server and its queue of connections. */
export interface TlsServer {
  readonly server: tls.Server;
  readonly connections: Connections;
  readonly address: InetAddress;
}

/**
 * Listens on `address` (port 0: the system chooses) with `credentials`.
 *
 * @example
 * ```ts
 * const server = yield* listen(selfSigned(), { host: "127.0.0.1", port: 0 });
 * ```
 * @throws the system's error (`EADDRINUSE`…).
 */
export function* listen(credentials: SelfSigned, address: InetAddress): Generator<B.Instruction, TlsServer, unknown> {
  const server = tls.createServer({ key: credentials.key, cert: credentials.cert });
  const connections = new Connections(server);
  server.listen(address.port, address.host);
  yield* B.once(server, "listening");
  const { address: host, port } = server.address() as AddressInfo;
  return { server, connections, address: { host, port } };
}

/**
 * Stops listening, closes the connections nobody took, and waits until the
 * connections being served have closed.
 *
 * @example
 * ```ts
 * yield* stop(server);
 * ```
 */
export function* stop({ server, connections }: TlsServer): Generator<B.Instruction, void, unknown> {
  connections[Symbol.dispose]();
  server.close();
  yield* B.once(server, "close");
}

/**
 * Echoes one connection until its end, half-closes, and closes it; returns the bytes echoed.
 *
 * @example
 * ```ts
 * B.spawn({ orphans }, echo, yield* connections.accept());
 * ```
 */
export function* echo(client: Socket): Generator<B.Instruction, number, unknown> {
  const buf = Buffer.alloc(4096);
  let total = 0;
  try {
    for (let n: number; (n = yield* read(client, buf)) > 0; total += n) yield* write(client, buf, 0, n);
    shutdown(client, "send");
  } finally {
    yield* close(client);
  }
  return total;
}

/**
 * The book's accept loop over TLS: each connection echoed by a task of its
 * own, until cancelled (its clients' tasks are cancelled with it).
 *
 * @example
 * ```ts
 * const serving = B.spawn(serve, server);
 * …
 * yield* B.cancel(serving);
 * ```
 */
export function* serve({ connections }: TlsServer): Generator<B.Instruction, never, unknown> {
  const clients = B.orphans<number>();
  for (;;) {
    for (let t = B.care(clients); t; t = B.care(clients)) yield* B.awaitTask(t);
    B.spawn({ orphans: clients }, echo, yield* connections.accept());
  }
}

/**
 * A client: connects over TLS to `address`, trusting `ca` for `servername`,
 * sends `message`, half-closes, and returns everything that came back.
 *
 * @example
 * ```ts
 * const reply = yield* exchange(server.address, credentials.cert, "localhost", "hello");
 * ```
 * @throws the TLS error when the server's certificate is not trusted (`DEPTH_ZERO_SELF_SIGNED_CERT`…), or the connection's.
 */
export function* exchange(
  address: InetAddress,
  ca: string,
  servername: string,
  message: string,
): Generator<B.Instruction, string, unknown> {
  using sock = fromStream(tls.connect({ host: address.host, port: address.port, ca, servername }));
  // The handshake runs under the first operations: its failure (an untrusted
  // certificate…) is the error of the one waiting.
  yield* write(sock, message);
  shutdown(sock, "send");
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(4096);
  for (let n: number; (n = yield* read(sock, buf)) > 0; ) chunks.push(Buffer.from(buf.subarray(0, n)));
  return Buffer.concat(chunks).toString("utf8");
}
