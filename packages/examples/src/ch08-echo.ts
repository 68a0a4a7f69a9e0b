/**
 * Chapter 8, the final echo server:
 *
 *     node dist/ch08-echo.js [--port 3000] [--domains auto|n] [--quiet] [--json]
 *
 * Serves on dom0 and on worker domains, printing each new client under a
 * mutex; Ctrl-C (SIGINT) stops it cleanly: the servers stop accepting, wait
 * for their clients to leave, and every socket is released, which the last
 * line checks. dom0 listens, then dom0 and `--domains` worker domains (`auto`,
 * the default: one per core but one) accept on that socket; the last lines
 * count the connections each domain served. `--json` ends with a
 * `REPORT {…}` line for programs.
 */
import { availableParallelism } from "node:os";
import { run } from "@bobbin/unix";
import { echoServers } from "./ch08/main.js";
import { formatAddress } from "./support/address.js";
import { fdTable, releaseReport } from "./support/fds.js";
import { domainsArg, serverProgram } from "./support/program.js";

const { host, port, values, backend } = await serverProgram(
  {
    domains: { type: "string", default: "auto" },
    quiet: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  },
  { sharing: true },
);
const domains = domainsArg(values.domains, availableParallelism() - 1);

const before = fdTable();
try {
  const stats = await run(
    function* () {
      return yield* echoServers({
        address: { host, port },
        domains,
        verbose: values.quiet !== true,
        onListening: (address) =>
          console.log(`echo server on ${formatAddress(address)}, dom0 + ${domains} worker domain(s); Ctrl-C to stop`),
        onStop: () => console.log("SIGINT: stopping"),
      });
    },
    { backend: backend.factory, domains },
  );
  for (const s of stats) console.log(`domain ${s.domain}: ${s.connections} connection(s), ${s.bytes} byte(s) echoed`);
  const { clean, line } = releaseReport(before);
  console.log(line);
  if (values.json === true) console.log(`REPORT ${JSON.stringify({ backend: backend.name, domains, stats, clean })}`);
  if (!clean) process.exitCode = 1;
} catch (error) {
  console.error(`the server failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
  process.exitCode = 1;
}
