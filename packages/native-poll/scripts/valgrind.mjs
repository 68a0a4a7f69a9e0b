#!/usr/bin/env node
// `pnpm test:valgrind`: runs test/valgrind/run.mjs (the addon's C++ exercised
// directly) under valgrind's memcheck and fails on any memory error or any
// definite leak. Needs valgrind (Debian: apt-get install -y valgrind) and the
// built addon. Takes about a minute; killed after 5.

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const addon = join(root, "build", "Release", "bobbin_native.node");

if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.error("test:valgrind: valgrind is not installed (Debian/Ubuntu: apt-get install -y valgrind)");
  process.exit(1);
}
if (!existsSync(addon)) {
  console.error("test:valgrind: the addon is not built: pnpm --filter @bobbin/native-poll run build:native");
  process.exit(1);
}

const log = join(root, "build", "valgrind.log");
const args = [
  "--tool=memcheck",
  "--error-exitcode=1",
  "--leak-check=full",
  "--show-leak-kinds=definite",
  "--errors-for-leak-kinds=definite",
  "--track-origins=yes",
  `--suppressions=${join(root, "test", "valgrind", "node.supp")}`,
  `--log-file=${log}`,
  process.execPath,
  "--expose-gc",
  join(root, "test", "valgrind", "run.mjs"),
];
console.log(`valgrind ${args.join(" ")}`);
const started = Date.now();
const r = spawnSync("valgrind", args, { cwd: root, stdio: "inherit", timeout: 5 * 60 * 1000 });
const seconds = ((Date.now() - started) / 1000).toFixed(0);
const text = existsSync(log) ? readFileSync(log, "utf8") : "";
const summary = text.split("\n").filter((l) => /ERROR SUMMARY|definitely lost|indirectly lost|possibly lost/.test(l));
for (const line of summary) console.log(line.replace(/^==\d+== /, ""));
if (r.error !== undefined || r.status !== 0) {
  console.error(text.slice(-20000));
  console.error(`test:valgrind: FAILED after ${seconds} s (${r.error?.message ?? `exit ${r.status ?? r.signal}`}); full log in ${log}`);
  process.exit(1);
}
console.log(`test:valgrind: no memory errors, no definite leaks (${seconds} s)`);
console.log("1 passed, 0 failed");
