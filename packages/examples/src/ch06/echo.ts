/**
 * Chapter 6, "An echo server with Miou": the echo server on `@bobbin/unix`,
 * each client handled by a task kept in an `orphans` collector.
 */
import * as B from "@bobbin/core";
import { type Address, accept, bindAndListen, close, getsockname, read, type Socket, tcpv4, write } from "@bobbin/unix";

/**
 * The book's `echo`: reads up to 0x100 bytes, writes them back, until the
 * end of the stream; then closes the client.
 *
 * Miou's `write` takes a string so that the buffer cannot change while it is
 * written; `@bobbin/unix`'s `write` returns only once the bytes were handed to
 * the system, after which `buf` may be reused, so no copy is needed.
 *
 * @example
 * ```ts
 * B.spawn({ orphans }, echo, client);
 * ```
 */
export function* echo(client: Socket): Generator<B.Instruction, void, unknown> {
  const buf = Buffer.alloc(0x100);
  try {
    for (let len = yield* read(client, buf); len > 0; len = yield* read(client, buf)) {
      yield* write(client, buf, 0, len);
    }
  } finally {
    yield* close(client); // also when the task is cancelled
  }
}

/**
 * The book's `clean_up`: awaits one ended client task, if any, and raises
 * its error.
 *
 * @example
 * ```ts
 * yield* cleanUp(orphans);
 * ```
 */
export function* cleanUp(orphans: B.Orphans<void>): Generator<B.Instruction, void, unknown> {
  const prm = B.care(orphans);
  if (prm !== null && prm !== undefined) yield* B.awaitExn(prm);
}

/** Called once a server listens, with the address it is bound to (port 0 becomes a real port). */
export type OnListening = (address: Address) => void;

/**
 * The first lines of the book's `server`: a TCP socket listening on `addr`.
 * The socket is closed if it cannot listen (`EADDRINUSE`…).
 *
 * @example
 * ```ts
 * const socket = yield* listen({ host: "127.0.0.1", port: 3000 });
 * ```
 * @throws the system's error when it cannot bind or listen.
 */
export function* listen(addr: Address): Generator<B.Instruction, Socket, unknown> {
  const socket = tcpv4();
  try {
    yield* bindAndListen(socket, addr);
  } catch (error) {
    yield* close(socket);
    throw error;
  }
  return socket;
}

/**
 * The book's `server` loop on a listening socket: forever cleans up an ended
 * client task, accepts a client, and spawns `echo` for it into the orphans.
 * It never returns; cancel it to stop it (it closes `socket` — in its own
 * domain only, when the socket is shared — and the client tasks are
 * cancelled and close theirs).
 *
 * @example
 * ```ts
 * B.spawn(serve, socket);
 * ```
 */
export function* serve(socket: Socket): Generator<B.Instruction, never, unknown> {
  try {
    const orphans = B.orphans<void>();
    for (;;) {
      yield* cleanUp(orphans);
      const [client] = yield* accept(socket);
      B.spawn({ orphans }, echo, client);
    }
  } finally {
    yield* close(socket);
  }
}

/**
 * The book's `server`: listens on `addr`, then serves (see {@link serve}).
 * Never returns; cancel it to stop it.
 *
 * @example
 * ```ts
 * await run(function* () { yield* server({ host: "127.0.0.1", port: 3000 }); });
 * ```
 */
export function* server(addr: Address, onListening?: OnListening): Generator<B.Instruction, never, unknown> {
  const socket = yield* listen(addr);
  onListening?.(getsockname(socket));
  return yield* serve(socket);
}
