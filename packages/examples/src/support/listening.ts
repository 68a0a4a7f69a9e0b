/**
 * Waiting for a server task to listen: the parallel servers of chapters 6
 * and 8 bind the address dom0's server got (its real port when it asked for
 * port 0), so they start once dom0's listens.
 */
import * as B from "@bobbin/core";

/**
 * Waits until `listening` is signalled (by the server's `onListening`), or
 * throws `server`'s error if it fails first (`EADDRINUSE`…).
 *
 * @example
 * ```ts
 * const listening = new B.Trigger();
 * const prm = B.spawn(server, addr, () => listening.signal());
 * yield* untilListening(prm, listening);
 * ```
 * @throws the server's error; Error when it ended without listening.
 */
export function* untilListening(server: B.Task<unknown>, listening: B.Trigger): Generator<B.Instruction, void, unknown> {
  const waiter = B.spawn(function* () {
    yield* listening.wait();
  });
  const first = yield* B.awaitOne<unknown>([server, waiter]);
  if (!first.ok) throw first.error; // the server failed; the waiter is cancelled with the caller
  if (!listening.isSignalled) throw new Error("the server ended before it listened");
}
