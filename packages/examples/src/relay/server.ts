/**
 * The chat relay's accept loop: every client a task of one group, which the
 * relay's cancellation (Ctrl-C under `main`) stops in one wave. Out of file
 * descriptors, it waits for clients to leave and accepts again.
 */
import * as B from "@bobbin/core";
import { accept, type Socket } from "@bobbin/unix";
import { type ClientLimits, Clients, IDLE_SECONDS } from "../support/clients.js";
import { acceptWhenPossible } from "../support/descriptors.js";
import type { Room } from "./room.js";
import { type Log, session } from "./session.js";

/** The relay's bounds when none are given: 1024 clients, 120 s of silence. */
const LIMITS: ClientLimits = { maxClients: 1024, idleSeconds: IDLE_SECONDS };

/**
 * Accepts clients on the listening socket `server`, each served by a
 * `session` in one task group, until cancelled; then every client is told,
 * every client socket closed, and the room closed. At most
 * `limits.maxClients` clients at once: at the cap, the client silent the
 * longest is let go to make room for the new one; a client silent for
 * `limits.idleSeconds` is let go too. Out of file descriptors (`EMFILE`…),
 * it logs it once and waits until clients leave (the connecting clients
 * wait in the kernel's queue).
 *
 * @example
 * ```ts
 * const server = tcpv4();
 * yield* bindAndListen(server, { host: "127.0.0.1", port: 3000 });
 * yield* serve(server, new Room(64), console.log, { maxClients: 100, idleSeconds: 300 });
 * ```
 * @throws Cancelled when cancelled; the errors of `accept` other than a
 * shortage of descriptors; a session's
 * unexpected error (which stops the others).
 */
export function* serve(
  server: Socket,
  room: Room,
  log: Log = () => {},
  limits: ClientLimits = LIMITS,
): Generator<B.Instruction, never, unknown> {
  const clients = new Clients(limits);
  try {
    return yield* B.group(function* (g): Generator<B.Instruction, never, unknown> {
      for (;;) {
        const [client, peer] = yield* acceptWhenPossible(
          () => accept(server),
          (code) => log(`* accept failed with ${code}: accepting again once clients leave`),
        );
        clients.makeRoom();
        g.spawn(session, room, client, peer, log, clients.add(client));
      }
    });
  } finally {
    room.close();
  }
}
