/**
 * The chat relay's accept loop: every client a task of one group, which the
 * relay's cancellation (Ctrl-C under `main`) stops in one wave. Out of file
 * descriptors, it waits for clients to leave and accepts again.
 */
import * as B from "@bobbin/core";
import { accept, type Socket } from "@bobbin/unix";
import { acceptWhenPossible } from "../support/descriptors.js";
import type { Room } from "./room.js";
import { type Log, session } from "./session.js";

/**
 * Accepts clients on the listening socket `server`, each served by a
 * `session` in one task group, until cancelled; then every client is told,
 * every client socket closed, and the room closed. Out of file descriptors
 * (`EMFILE`…), it logs it once and waits until clients leave (the connecting
 * clients wait in the kernel's queue).
 *
 * @example
 * ```ts
 * const server = tcpv4();
 * yield* bindAndListen(server, { host: "127.0.0.1", port: 3000 });
 * yield* serve(server, new Room(64), console.log);
 * ```
 * @throws Cancelled when cancelled; the errors of `accept` other than a
 * shortage of descriptors; a session's
 * unexpected error (which stops the others).
 */
export function* serve(server: Socket, room: Room, log: Log = () => {}): Generator<B.Instruction, never, unknown> {
  try {
    return yield* B.group(function* (g): Generator<B.Instruction, never, unknown> {
      for (;;) {
        const [client, peer] = yield* acceptWhenPossible(
          () => accept(server),
          (code) => log(`* accept failed with ${code}: accepting again once clients leave`),
        );
        g.spawn(session, room, client, peer, log);
      }
    });
  } finally {
    room.close();
  }
}
