/**
 * Chapter 8, the final echo server:
 *
 *     node dist/ch08-echo.js [--port 3000] [--domains auto|n] [--quiet] [--json]
 *
 * Serves on dom0 and on worker domains, printing each new client under a
 * mutex; Ctrl-C (SIGINT) stops it cleanly: the servers stop accepting, wait
 * for their clients to leave, and every socket is released, which the last
 * line checks. `--domains auto` (the default) uses one worker domain per core
 * but one when worker domains can listen (see the README), dom0 alone
 * otherwise; `--json` ends with a `REPORT {…}` line for programs.
 */
import { availableParallelism } from "node:os";
import { run } from "@bobbin/unix";
import { echoServers } from "./ch08/main.js";
import { probeParallelListen } from "./ch08/probe.js";
import { formatAddress } from "./support/address.js";
import { chooseBackend } from "./support/backend.js";
import { serverArgs } from "./support/cli.js";
import { fdTable, releaseReport } from "./support/fds.js";

const { host, port, values } = serverArgs({
  domains: { type: "string", default: "auto" },
  quiet: { type: "boolean", default: false },
  json: { type: "boolean", default: false },
});
const backend = await chooseBackend();
console.log(`backend: ${backend.name} (${backend.reason})`);

let domains: number;
if (values.domains === "auto") {
  domains = availableParallelism() - 1;
  if (domains > 0) {
    const probe = await probeParallelListen(backend.factory);
    if (!probe.ok) {
      console.log(`dom0 only: worker domains cannot listen here (${probe.reason})`);
      domains = 0;
    }
  }
} else {
  domains = Number(values.domains);
  if (!Number.isInteger(domains) || domains < 0) throw new RangeError(`--domains must be auto or an integer ≥ 0, got ${values.domains}`);
}

const before = fdTable();
try {
  const stats = await run(
    function* () {
      return yield* echoServers({
        address: { host, port },
        domains,
        verbose: values.quiet !== true,
        onListening: (address) => console.log(`echo server on ${formatAddress(address)}, dom0 + ${domains} worker domain(s); Ctrl-C to stop`),
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
