/**
 * Chapter 8's main program: the final echo server on every domain, stopped
 * by SIGINT (the book's last `let () = Miou_unix.run @@ fun () -> …`).
 */
import * as B from "@bobbin/core";
import { type Address, onSignal } from "@bobbin/unix";
import { untilListening } from "../support/listening.js";
import { serverOrStopAll, type Stats } from "./server.js";
import { Shutdown, stopFlag } from "./shutdown.js";
import { serverTask } from "./tasks.js";

/** Options of {@link echoServers}. */
export interface EchoServersOptions {
  readonly address: Address;
  /**
   * How many worker domains run a server beside dom0's. The book uses
   * `recommended_domain_count () - 1`, which is `B.Domain.available()`
   * (the default); 0 serves on dom0 only.
   */
  readonly domains?: number;
  /** Print "new client: …" for each client. Default true. */
  readonly verbose?: boolean;
  /** Called once dom0's server listens, with its address. */
  readonly onListening?: (address: Address) => void;
  /** Called when SIGINT arrives, before the servers are told to stop. */
  readonly onStop?: () => void;
}

/**
 * Runs the echo server on dom0 and on `domains` worker domains until
 * SIGINT, then returns what each one did (dom0's first).
 *
 * @example
 * ```ts
 * import { run } from "@bobbin/unix";
 * const stats = await run(function* () {
 *   return yield* echoServers({ address: { host: "127.0.0.1", port: 3000 } });
 * });
 * ```
 */
export function* echoServers(options: EchoServersOptions): Generator<B.Instruction, Stats[], unknown> {
  const domains = options.domains ?? B.Domain.available();
  const verbose = options.verbose ?? true;
  const flag = stopFlag();
  const shutdown = new Shutdown(flag);
  onSignal("SIGINT", function* () {
    options.onStop?.();
    yield* shutdown.request();
  });
  // dom0 hears of a stop raised by another domain (one whose server failed) too.
  const relay = B.spawn(function* () {
    yield* shutdown.relay();
  });
  let bound: Address = options.address;
  const listening = new B.Trigger();
  const prm = B.spawn(serverOrStopAll, {
    address: options.address,
    shutdown,
    verbose,
    reusePort: domains > 0,
    onListening: (address: Address) => {
      bound = address;
      options.onListening?.(address);
      listening.signal();
    },
  });
  try {
    yield* untilListening(prm, listening);
    const others =
      domains === 0 ? [] : yield* B.parallel(serverTask, Array.from({ length: domains }, () => ({ address: bound, stop: flag, verbose })));
    const stats = [yield* B.awaitExn(prm)];
    for (const r of others) {
      if (!r.ok) throw r.error;
      stats.push(r.value);
    }
    return stats;
  } finally {
    yield* B.cancel(relay);
  }
}
