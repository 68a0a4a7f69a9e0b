/**
 * Chapter 6, "Ownership": the echo server with sockets owned by tasks
 * (`@bobbin/unix`'s `OwnedSockets`, Miou_unix's `Ownership`). Every operation checks that
 * the current task owns the socket (`NotOwner` otherwise); the listening
 * socket belongs to the server, each client is given to its echo task with
 * `spawn({ give })`; a task that ends while still owning a socket fails the
 * run with `ResourceLeaked`, and one that fails or is cancelled has its
 * sockets closed by their finalisers.
 */
import * as B from "@bobbin/core";
import { type Address, type OwnedSocket, OwnedSockets } from "@bobbin/unix";
import { cleanUp, type OnListening } from "./echo.js";

/**
 * The book's `echo` with `OwnedSockets.read`/`write`/`close`. Closing releases
 * the socket: forgetting to would be `ResourceLeaked`. If the task fails or
 * is cancelled instead, the finaliser closes the socket.
 *
 * @example
 * ```ts
 * B.spawn({ orphans, give: [client] }, echo, client);
 * ```
 */
export function* echo(client: OwnedSocket): Generator<B.Instruction, void, unknown> {
  const buf = Buffer.alloc(0x100);
  for (;;) {
    const len = yield* OwnedSockets.read(client, buf);
    if (len === 0) return yield* OwnedSockets.close(client);
    yield* OwnedSockets.write(client, buf, 0, len);
  }
}

/**
 * The book's `server` with owned sockets: the client accepted is given to
 * its echo task (`give`), which then owns it. Cancel it to stop it: the
 * finalisers close the listening socket and the clients' sockets.
 *
 * @example
 * ```ts
 * await run(function* () { yield* server({ host: "127.0.0.1", port: 3000 }); });
 * ```
 */
export function* server(addr: Address, onListening?: OnListening): Generator<B.Instruction, never, unknown> {
  const socket = OwnedSockets.tcpv4();
  yield* OwnedSockets.bindAndListen(socket, addr);
  onListening?.(OwnedSockets.getsockname(socket));
  const orphans = B.orphans<void>();
  for (;;) {
    yield* cleanUp(orphans);
    const [client] = yield* OwnedSockets.accept(socket);
    B.spawn({ orphans, give: [client] }, echo, client);
  }
}
