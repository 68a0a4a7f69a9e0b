/**
 * Chapter 6, the echo server on every domain:
 *
 *     node dist/ch06-parallel.js [--port 3000] [--domains auto|n]
 *
 * Runs until killed. dom0 listens, then dom0 and `--domains` worker domains
 * (`auto`, the default: one per core but one) accept on that socket. The
 * book counts the program's threads to see the domains:
 * `ls /proc/<pid>/task | wc -l`.
 */
import { availableParallelism } from "node:os";
import { run } from "@bobbin/unix";
import { servers } from "./ch06/parallel.js";
import { formatAddress } from "./support/address.js";
import { domainsArg, serverProgram } from "./support/program.js";

const { host, port, values, backend } = await serverProgram({ domains: { type: "string", default: "auto" } });
const domains = domainsArg(values.domains, availableParallelism() - 1);
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
