/**
 * Can the servers of several domains listen on the same address? That
 * needs an I/O backend in worker domains and SO_REUSEPORT, which a run of
 * `@bobbin/unix` may not offer (see the README); this tries it.
 */
import * as B from "@bobbin/core";
import { type Backend, bindAndListen, close, getsockname, run, tcpv4 } from "@bobbin/unix";
import { listenProbe } from "./tasks.js";

/** The answer of {@link probeParallelListen}. */
export type ProbeResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * Listens on a port of 127.0.0.1 on dom0, then on the same port from a
 * worker domain, both with SO_REUSEPORT.
 *
 * @example
 * ```ts
 * const p = await probeParallelListen(libuv);
 * if (!p.ok) console.log(`dom0 only: ${p.reason}`);
 * ```
 */
export async function probeParallelListen(backend: (domain: number) => Backend): Promise<ProbeResult> {
  try {
    await run(
      function* () {
        const socket = tcpv4();
        try {
          yield* bindAndListen(socket, { host: "127.0.0.1", port: 0 }, { reusePort: true } as object);
          yield* B.awaitExn(B.call(listenProbe, getsockname(socket)));
        } finally {
          yield* close(socket);
        }
      },
      { backend, domains: 1 },
    );
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}
