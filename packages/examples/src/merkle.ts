/**
 * A parallel Merkle-tree hash (CPU-bound `parallel`):
 *
 *     node dist/merkle.js [--leaves 65536] [--leaf-size 1024] [--domains n]
 *
 * Hashes the same tree on dom0 alone, then with its subtrees spread over
 * `n` worker domains (default: one per core), and prints both roots and the
 * speed-up. Chapter 1's warning applies: Miou (and Bobbin) are made for
 * I/O; this shows that CPU-bound work can still be shared out.
 */
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import { compare } from "./merkle/hash.js";

const { values } = parseArgs({
  options: {
    leaves: { type: "string", default: String(1 << 16) },
    "leaf-size": { type: "string", default: "1024" },
    domains: { type: "string", default: String(availableParallelism()) },
  },
});
const leaves = Number(values.leaves);
const leafSize = Number(values["leaf-size"]);
const domains = Number(values.domains);

const c = await compare({ leaves, leafSize, domains });
const mb = (leaves * leafSize) / 2 ** 20;
console.log(`${leaves} leaves of ${leafSize} B (${mb.toFixed(0)} MiB)`);
console.log(`dom0 alone:                 ${c.sequentialMs.toFixed(0).padStart(6)} ms`);
console.log(
  `parallel, ${String(c.domains).padEnd(2)} domains, ${String(c.parts).padEnd(3)} parts: ${c.parallelMs.toFixed(0).padStart(6)} ms`,
);
console.log(`root ${c.root} ${c.sameRoot ? "(the same both ways)" : "DIFFERS?!"}`);
console.log(`speed-up ×${(c.sequentialMs / c.parallelMs).toFixed(2)} on ${availableParallelism()} core(s)`);
if (!c.sameRoot) process.exitCode = 1;
