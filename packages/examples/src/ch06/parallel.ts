/**
 * Chapter 6, "Parallelism": the echo server on every domain. dom0 binds and
 * listens, then every domain accepts on that one listening socket: dom0
 * through `spawn` (a parallel task never runs on dom0), the worker domains
 * through `parallel`, each given the socket. The system hands each
 * connection to one of them: first come, first served.
 */
import * as B from "@bobbin/core";
import { type Address, getsockname } from "@bobbin/unix";
import { listen, type OnListening, serve } from "./echo.js";
import { serverTask } from "./tasks.js";

/**
 * The book's `let () = Miou_unix.run @@ fun () -> … Miou.parallel server
 * domains`: listens on `addr`, then serves on dom0 and on `domains` worker
 * domains (default `B.Domain.available()`, the book's
 * `recommended_domain_count () - 1`). Never returns; cancel it to stop every
 * server.
 *
 * @example
 * ```ts
 * await run(function* () { yield* servers({ host: "127.0.0.1", port: 3000 }); });
 * ```
 * @throws the system's error when it cannot listen; a server's error.
 */
export function* servers(
  addr: Address,
  onListening?: OnListening,
  domains = B.Domain.available(),
): Generator<B.Instruction, never, unknown> {
  const socket = yield* listen(addr);
  onListening?.(getsockname(socket));
  const prm = B.spawn(serve, socket); // the book's Miou.call_cc server
  const others =
    domains === 0
      ? []
      : yield* B.parallel(
          serverTask,
          Array.from({ length: domains }, () => socket),
        );
  // The servers never return: a result here is a server that failed.
  for (const r of others) if (!r.ok) throw r.error;
  return yield* B.awaitExn(prm);
}
