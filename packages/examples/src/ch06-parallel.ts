/**
 * Chapter 6, the echo server on every domain:
 *
 *     node dist/ch06-parallel.js [--port 3000] [--domains n]
 *
 * Runs until killed. `--domains` defaults to one worker domain per core but
 * one when worker domains can listen (see the README); with 0, or when they
 * cannot, dom0 serves alone. The book counts the program's threads to see
 * the domains: `ls /proc/<pid>/task | wc -l`.
 */
import { availableParallelism } from "node:os";
import { run } from "@bobbin/unix";
import { servers } from "./ch06/parallel.js";
import { probeParallelListen } from "./ch08/probe.js";
import { formatAddress } from "./support/address.js";
import { chooseBackend } from "./support/backend.js";
import { serverArgs } from "./support/cli.js";

const { host, port, values } = serverArgs({ domains: { type: "string", default: "auto" } });
const backend = await chooseBackend();
console.log(`backend: ${backend.name} (${backend.reason})`);
let domains = values.domains === "auto" ? availableParallelism() - 1 : Number(values.domains);
if (values.domains === "auto" && domains > 0) {
  const probe = await probeParallelListen(backend.factory);
  if (!probe.ok) {
    console.log(`dom0 only: worker domains cannot listen here (${probe.reason})`);
    domains = 0;
  }
}
await run(
  function* () {
    yield* servers(
      { host, port },
      (address) => console.log(`echo server on ${formatAddress(address)}, dom0 + ${domains} worker domain(s) (pid ${process.pid})`),
      domains,
    );
  },
  { backend: backend.factory, domains },
);
