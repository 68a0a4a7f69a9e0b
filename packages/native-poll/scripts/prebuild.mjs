#!/usr/bin/env node
// Makes the prebuilt binary of this platform with prebuildify, into
// prebuilds/<platform>-<arch>/node.napi.<libc>.node (libc tagged on Linux),
// which node-gyp-build loads at run time and scripts/build.mjs prefers to a
// build from source. One binary per platform serves every Node line: the addon
// uses Node-API only (NAPI_VERSION in binding.gyp).
//
//   node scripts/prebuild.mjs       # `pnpm --filter @bobbin/native-poll build:prebuilt`
//
// Run when the package is packed for publishing (the release workflow, on each
// platform) and by the install test before packing; never committed. It
// builds in a copy of the sources so the workspace's own build/ stays as it
// is, against the headers of the Node that runs it (nothing is downloaded).

import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const nodedir = resolve(dirname(process.execPath), "..");
if (!existsSync(join(nodedir, "include", "node", "node_api.h"))) {
  console.error(`prebuild: no Node headers in ${nodedir}/include/node (the prefix of ${process.execPath})`);
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), "bobbin-prebuild-"));
try {
  for (const name of ["binding.gyp", "package.json", "native"]) cpSync(join(root, name), join(work, name), { recursive: true });
  symlinkSync(join(root, "node_modules"), join(work, "node_modules"));
  const bin = join(root, "node_modules", ".bin");
  const args = [
    join(root, "node_modules", "prebuildify", "bin.js"),
    "--napi",
    "--strip",
    "--name=node.napi",
    ...(process.platform === "linux" ? ["--tag-libc"] : []),
    `--target=node@${process.versions.node}`,
    `--out=${root}`,
  ];
  console.log(`prebuild: prebuildify ${args.slice(1).join(" ")} (headers from ${nodedir})`);
  const r = spawnSync(process.execPath, args, {
    cwd: work,
    stdio: "inherit",
    // node-gyp reads its options from npm_config_*: the headers of this Node.
    env: { ...process.env, npm_config_nodedir: nodedir, npm_config_jobs: "max", PREBUILD_NODE_GYP: join(bin, "node-gyp") },
  });
  if (r.status !== 0) {
    console.error(`prebuild: prebuildify failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`})`);
    process.exit(1);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
