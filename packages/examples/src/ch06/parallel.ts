/**
 * Chapter 6, "Parallelism": the echo server on every domain. Several
 * servers listen on the same address; the system hands each connection to
 * one of them. dom0 runs one too, through `spawn` (a parallel task never
 * runs on dom0).
 */
import * as B from "@bobbin/core";
import type { Address } from "@bobbin/unix";
import { type OnListening, server } from "./echo.js";
import { untilListening } from "../support/listening.js";
import { serverTask } from "./tasks.js";

/**
 * The book's `let () = Miou_unix.run @@ fun () -> … Miou.parallel server
 * domains`: dom0's server, then one server on each of `domains` worker
 * domains (default `B.Domain.available()`, the book's
 * `recommended_domain_count () - 1`) on the address dom0's got. Never
 * returns; cancel it to stop every server.
 *
 * @example
 * ```ts
 * await run(function* () { yield* servers({ host: "127.0.0.1", port: 3000 }); });
 * ```
 */
export function* servers(addr: Address, onListening?: OnListening, domains = B.Domain.available()): Generator<B.Instruction, never, unknown> {
  let bound: Address | null = null;
  const listening = new B.Trigger();
  const prm = B.spawn(server, addr, (address: Address) => {
    bound = address;
    onListening?.(address);
    listening.signal();
  }, domains > 0);
  yield* untilListening(prm, listening);
  if (domains === 0) return yield* B.awaitExn(prm);
  const results = yield* B.parallel(serverTask, Array.from({ length: domains }, () => bound!));
  // The servers never return: a result here is a server that failed.
  for (const r of results) if (!r.ok) throw r.error;
  return yield* B.awaitExn(prm);
}
