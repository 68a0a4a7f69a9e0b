/**
 * Chapter 4's programs: `our_accept` on its own, then the toy scheduler
 * accepting one client, then the asynchronous echo server.
 */
import { type Effect, spawn } from "../ch03/toy-scheduler.js";
import type { FileDescr } from "../support/pocket-unix.js";
import * as Unix from "../support/pocket-unix.js";
import { ourAccept, ourRead, ourWrite, run } from "./toy-io.js";

/**
 * The book's first `our_accept`: no scheduler yet, only `select` with a
 * 10 ms timeout in a loop, printing "Monitor our file-descriptor." each time,
 * until a connection arrives; then closes the client and the socket.
 *
 * @example
 * ```ts
 * await monitor(await Unix.listen({ host: "127.0.0.1", port: 3000 }));
 * ```
 */
export async function monitor(socket: FileDescr): Promise<void> {
  const ourAcceptBySelect = async (fd: FileDescr): Promise<[FileDescr, Unix.Sockaddr]> => {
    for (;;) {
      console.log("Monitor our file-descriptor.");
      const [rds] = await Unix.select([fd], [], [], 0.01);
      if (rds.length > 0) return Unix.accept(fd);
    }
  };
  const [client] = await ourAcceptBySelect(socket);
  Unix.close(client);
  Unix.close(socket);
}

/**
 * The book's `server` on the toy scheduler with `ourSelect`: accepts one
 * client without blocking the scheduler, then closes both descriptors.
 *
 * @example
 * ```ts
 * await acceptOnce(await Unix.listen({ host: "127.0.0.1", port: 3000 }));
 * ```
 */
export function acceptOnce(socket: FileDescr): Promise<void> {
  return run(function* () {
    const [client] = yield* ourAccept(socket);
    Unix.close(client);
    Unix.close(socket);
  });
}

/** The book's `echo`, with `ourRead` and `ourWrite`. */
export function* echo(client: FileDescr): Generator<Effect, void, unknown> {
  const buf = new Uint8Array(0x100);
  for (;;) {
    const len = yield* ourRead(client, buf, 0, buf.length);
    if (len === 0) return Unix.close(client);
    yield* ourWrite(client, buf, 0, len);
  }
}

/**
 * The book's asynchronous echo server: accepts clients and echoes each one
 * in a task of its own, so a connected client no longer holds the others up.
 * The book loops forever; `clients` bounds the loop (after that many clients
 * the socket is closed and "Server terminated" printed; the toy scheduler
 * still runs the echo tasks to their end).
 *
 * @example
 * ```ts
 * await echoServer(await Unix.listen({ host: "127.0.0.1", port: 3000 }));
 * ```
 */
export function echoServer(socket: FileDescr, clients = Infinity): Promise<void> {
  return run(function* () {
    for (let served = 0; served < clients; served++) {
      const [client] = yield* ourAccept(socket);
      yield* spawn(() => echo(client));
    }
    Unix.close(socket);
    console.log("Server terminated");
  });
}
