/**
 * Chapter 8's main program: the final echo server on every domain, stopped
 * by SIGINT (the book's last `let () = Miou_unix.run @@ fun () -> …`).
 */
import * as B from "@bobbin/core";
import { Mutex, Semaphore } from "@bobbin/sync";
import { type Address, OwnedSockets, onSignal } from "@bobbin/unix";
import type { ClientLimits } from "../support/clients.js";
import { type ServerContext, type Stats, serverOrStopAll } from "./server.js";
import { newShutdown, stop } from "./shutdown.js";
import { serverTask } from "./tasks.js";

/** Options of {@link echoServers}. */
export interface EchoServersOptions {
  readonly address: Address;
  /**
   * How many worker domains serve beside dom0. The book uses
   * `recommended_domain_count () - 1`, which is `B.Domain.available()`
   * (the default); 0 serves on dom0 only.
   */
  readonly domains?: number;
  /** Print "new client: … (domain n)" for each client. Default true. */
  readonly verbose?: boolean;
  /** Each domain's server's bounds on its clients (see support/clients.ts). Default: 1024 clients, 120 s of silence. */
  readonly limits?: ClientLimits;
  /** Called once every domain's server accepts on the socket, with its address. */
  readonly onListening?: (address: Address) => void;
  /** Called when SIGINT arrives, before the servers are told to stop. */
  readonly onStop?: () => void;
}

/**
 * Listens on `options.address`, then serves on dom0 and on `domains` worker
 * domains, all accepting on that socket, until SIGINT; returns what each one
 * did (dom0's first).
 *
 * @example
 * ```ts
 * import { run } from "@bobbin/unix";
 * const stats = await run(function* () {
 *   return yield* echoServers({ address: { host: "127.0.0.1", port: 3000 } });
 * });
 * ```
 * @throws the system's error when it cannot listen (`EADDRINUSE`…); a server's error.
 */
export function* echoServers(options: EchoServersOptions): Generator<B.Instruction, Stats[], unknown> {
  const domains = options.domains ?? B.Domain.available();
  // The book's globals, made once and given to every domain's server.
  const ready = Semaphore.shared(0);
  const ctx: ServerContext = {
    shutdown: newShutdown(),
    out: Mutex.shared(),
    ready,
    verbose: options.verbose ?? true,
    limits: options.limits,
  };
  onSignal("SIGINT", function* () {
    options.onStop?.();
    yield* stop(ctx.shutdown);
  });
  const socket = OwnedSockets.tcpv4();
  yield* OwnedSockets.bindAndListen(socket, options.address);
  const address = OwnedSockets.getsockname(socket);
  // The book's `Miou.call_cc server` (dom0 accepts too), then `Miou.parallel server domains`.
  const prm = B.spawn({ give: [socket] }, serverOrStopAll, socket, ctx);
  // Say so once every domain accepts (a worker domain takes a moment to start;
  // a client that comes earlier is served by the domains already accepting).
  const announce = B.spawn(function* () {
    yield* ready.acquire(domains + 1);
    options.onListening?.(address);
  });
  try {
    const others =
      domains === 0
        ? []
        : yield* B.parallel(
            serverTask,
            Array.from({ length: domains }, () => ({ ...ctx, socket: socket.value })),
          );
    const stats = [yield* B.awaitExn(prm)];
    for (const r of others) {
      if (!r.ok) throw r.error;
      stats.push(r.value);
    }
    return stats;
  } finally {
    yield* B.cancel(announce); // done by now, unless a server failed before every domain accepted
  }
}
