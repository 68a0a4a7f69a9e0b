/**
 * Chapter 2, "A practical counter-example: a synchronous server".
 *
 * The book's server, written the way it runs: one call after the other,
 * each waiting for the previous one. `await` marks every call that blocks
 * (see `blocking` in the pocket Unix): while the server waits in `read` for
 * its first client, it cannot `accept` a second one.
 */
import { blocking, close, type FileDescr } from "../support/pocket-unix.js";

/**
 * The book's `echo`: reads what the client sends and writes it back, until
 * the end of the stream; then closes the client.
 *
 * @example
 * ```ts
 * await echo(client);
 * ```
 */
export async function echo(client: FileDescr): Promise<void> {
  const buf = new Uint8Array(0x100);
  for (;;) {
    const len = await blocking.read(client, buf, 0, buf.length);
    if (len === 0) return close(client);
    await blocking.write(client, buf, 0, len);
  }
}

/**
 * The book's `server`: accepts a client, echoes it until it leaves, and
 * only then accepts the next one. The book's first version serves one client
 * (`clients = 1`), its second loops forever (`clients = Infinity`); after
 * `clients` clients the socket is closed and "Server terminated" printed.
 *
 * @example
 * ```ts
 * const socket = await listen({ host: "127.0.0.1", port: 3000 }, 64);
 * await server(socket, 1);
 * ```
 */
export async function server(socket: FileDescr, clients = Infinity): Promise<void> {
  for (let served = 0; served < clients; served++) {
    const [client] = await blocking.accept(socket);
    await echo(client);
  }
  close(socket);
  console.log("Server terminated");
}
