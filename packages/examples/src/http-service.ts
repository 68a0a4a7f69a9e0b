/**
 * An HTTP JSON service with graceful shutdown (`@bobbin/http` under `main`):
 *
 *     node dist/http-service.js [--port 3000] [--upstream http://host:port] [--deadline 10] [--limit 1000] [--grace 5]
 *
 * Serves a small in-memory store, a slow endpoint that a client who leaves
 * cancels, and a quote endpoint that fetches from another service (see
 * `http/service.ts` for the routes). Without `--upstream` it also runs that
 * quote service itself, on a port of its own. Ctrl-C (SIGINT) or SIGTERM
 * stops it gracefully: no new connection is taken, the requests in flight
 * finish (for `--grace` seconds at most), then every connection is closed;
 * the last lines say what it served, what its handlers threw (each such
 * request was answered 500), and whether a socket was left open; the exit
 * code is 130 (143 for SIGTERM).
 *
 *     curl -X PUT localhost:3000/items/spool -d '{"colour":"red"}'
 *     curl localhost:3000/items
 *     curl localhost:3000/quote/3
 *     curl 'localhost:3000/slow?seconds=5'     # Ctrl-C the curl: the handler is cancelled
 */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { main } from "@bobbin/unix";
import { quoteService } from "./http/quotes.js";
import { jsonService, newStats } from "./http/service.js";
import { fdTable, releaseReport } from "./support/fds.js";
import { serverProgram } from "./support/program.js";

const { host, port, values, backend } = await serverProgram({
  upstream: { type: "string" },
  deadline: { type: "string", default: "10" },
  limit: { type: "string", default: "1000" },
  grace: { type: "string", default: "5" },
});

function positive(name: string, integer: boolean): number {
  const n = Number(values[name]);
  if (!(n > 0) || (integer && !Number.isInteger(n)))
    throw new RangeError(`--${name} must be a${integer ? "n integer" : " number"} > 0, got ${values[name]}`);
  return n;
}
const deadline = positive("deadline", false);
const limit = positive("limit", true);
const grace = positive("grace", false);

const before = fdTable();
const stats = newStats();
main(
  function* () {
    yield* B.group(function* (g) {
      let upstream = values.upstream as string | undefined;
      if (upstream === undefined) {
        const listening = new L.Trigger();
        g.spawn(quoteService, {
          host,
          port: 0,
          onListening: (address) => {
            upstream = `http://${host}:${address.port}`;
            console.log(`quote service on ${upstream}`);
            listening.signal();
          },
        });
        yield* listening.wait();
      }
      g.spawn(
        jsonService,
        {
          host,
          port,
          upstream: upstream!,
          deadline,
          limit,
          grace,
          onListening: (address) => console.log(`HTTP service on http://${host}:${address.port} (quotes from ${upstream}); Ctrl-C to stop`),
        },
        stats,
      );
    });
  },
  {
    backend: backend.factory,
    // After the run, every handle released: what it served, and whether a socket was left open.
    onExit() {
      console.log(
        `served ${stats.requests} request(s); ${stats.slowCancelled} slow one(s) cancelled before they answered; ${stats.upstreamFailures} quote(s) the quote service did not answer`,
      );
      for (const error of stats.errors) console.error("a handler failed:", error);
      const { clean, line } = releaseReport(before);
      console.log(line);
      if (!clean) process.exitCode = 1;
    },
  },
);
