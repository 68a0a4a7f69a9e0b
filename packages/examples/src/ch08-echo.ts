/**
 * Chapter 8, the final echo server:
 *
 *     node dist/ch08-echo.js [--port 3000] [--domains auto|n] [--quiet] [--json] [--max-clients auto|n] [--idle-timeout 120]
 *
 * Serves on dom0 and on worker domains, printing each new client under a
 * mutex; Ctrl-C (SIGINT) stops it cleanly: the servers stop accepting, wait
 * for their clients to leave, and every socket is released, which the last
 * line checks. dom0 listens, then dom0 and `--domains` worker domains (`auto`,
 * the default: one per core but one) accept on that socket; the last lines
 * count the connections each domain served. `--json` ends with a
 * `REPORT {…}` line for programs. `main` runs it: SIGTERM cancels the
 * servers instead (exit code 143), and a second signal ends the process at
 * once. Each domain's server holds at most `--max-clients` clients (`auto`,
 * the default: what the process's descriptors allow, shared between the
 * domains, at most 1024): at the cap, the client silent the longest makes
 * room for the new one; a client silent for `--idle-timeout` seconds
 * (default 120) is let go.
 */
import { availableParallelism } from "node:os";
import { main } from "@bobbin/unix";
import { echoServers } from "./ch08/main.js";
import type { Stats } from "./ch08/server.js";
import { formatAddress } from "./support/address.js";
import { CLIENT_LIMIT_OPTIONS, clientLimitsArgs } from "./support/clients.js";
import { fdTable, releaseReport } from "./support/fds.js";
import { domainsArg, serverProgram } from "./support/program.js";

const { host, port, values, backend } = await serverProgram({
  domains: { type: "string", default: "auto" },
  quiet: { type: "boolean", default: false },
  json: { type: "boolean", default: false },
  ...CLIENT_LIMIT_OPTIONS,
});
const domains = domainsArg(values.domains, availableParallelism() - 1);
const limits = clientLimitsArgs(values, domains + 1);

const before = fdTable();
let stats: Stats[] | null = null;
// The servers handle SIGINT themselves (the book's handler broadcasts the
// stop condition), so main leaves that signal to them; SIGTERM cancels them,
// and a second signal ends the process at once. A failure is printed by main.
main(
  function* () {
    stats = yield* echoServers({
      address: { host, port },
      domains,
      verbose: values.quiet !== true,
      limits,
      onListening: (address) => console.log(`echo server on ${formatAddress(address)}, dom0 + ${domains} worker domain(s); Ctrl-C to stop`),
      onStop: () => console.log("SIGINT: stopping"),
    });
  },
  {
    backend: backend.factory,
    domains,
    // After the run, every handle released: what each domain did, and whether a socket was left open.
    onExit() {
      if (stats === null) return;
      for (const s of stats) console.log(`domain ${s.domain}: ${s.connections} connection(s), ${s.bytes} byte(s) echoed`);
      const { clean, line } = releaseReport(before);
      console.log(line);
      if (values.json === true) console.log(`REPORT ${JSON.stringify({ backend: backend.name, domains, stats, clean })}`);
      if (!clean) process.exitCode = 1;
    },
  },
);
