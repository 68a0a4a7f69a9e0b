#!/usr/bin/env node
// Builds the C++ addon (build/Release/bobbin_native.node) with node-gyp, against
// the headers of the Node that runs this script, never downloaded ones.
//
//   node scripts/build.mjs            # "install"/"build": on failure, explain and exit 0
//   node scripts/build.mjs --strict   # exit 1 on failure (CI, `pnpm build:native`)
//   node scripts/build.mjs --force    # a full node-gyp rebuild, even if the addon is up to date
//
// BOBBIN_NATIVE_SKIP=1 skips the build. A failed build never fails installation:
// `@bobbin/unix` keeps its libuv backend, and asking for the native backend
// throws an error that says how to build it (see src/load.ts).

import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const strict = process.argv.includes("--strict");
const force = process.argv.includes("--force");
const addon = join(root, "build", "Release", "bobbin_native.node");

function howTo(reason) {
  return [
    `@bobbin/native-poll: the native addon was not built (${reason}).`,
    "  @bobbin/unix keeps working with its default libuv backend; only nativeBackend() is unavailable.",
    "  To build it you need a C++ compiler (g++ or clang++), python3 and make, then run:",
    "    pnpm --filter @bobbin/native-poll run build:native",
    `  (or: cd ${root} && node scripts/build.mjs --strict)`,
  ].join("\n");
}

function finish(ok, reason) {
  if (ok) process.exit(0);
  const text = howTo(reason);
  if (strict) {
    console.error(text);
    process.exit(1);
  }
  console.warn(text);
  process.exit(0);
}

if (process.env.BOBBIN_NATIVE_SKIP === "1") finish(false, "BOBBIN_NATIVE_SKIP=1");
if (process.platform === "win32") finish(false, "Windows has neither epoll nor kqueue");

// The headers of this very Node: <prefix>/include/node, where <prefix> holds bin/node.
function nodeDir() {
  const candidates = [resolve(dirname(process.execPath), ".."), process.env.npm_config_nodedir].filter(Boolean);
  for (const dir of candidates) {
    if (existsSync(join(dir, "include", "node", "node_api.h"))) return dir;
  }
  return null;
}

function newestSource() {
  let newest = statSync(join(root, "binding.gyp")).mtimeMs;
  for (const name of readdirSync(join(root, "native"))) {
    newest = Math.max(newest, statSync(join(root, "native", name)).mtimeMs);
  }
  return newest;
}

if (!force && existsSync(addon) && statSync(addon).mtimeMs >= newestSource()) {
  console.log("@bobbin/native-poll: native addon is up to date");
  finish(true);
}

const nodedir = nodeDir();
if (nodedir === null) {
  finish(false, `no Node headers next to ${process.execPath} (expected <prefix>/include/node/node_api.h); set npm_config_nodedir`);
}

let gyp;
try {
  gyp = createRequire(join(root, "package.json")).resolve("node-gyp/bin/node-gyp.js");
} catch {
  finish(false, "node-gyp is not installed (it is a dependency of this package: run pnpm install)");
}

// Configured before for the same headers: an incremental build, which never
// removes the addon a running process may be loading. Otherwise a full rebuild.
let command = "rebuild";
try {
  const config = readFileSync(join(root, "build", "config.gypi"), "utf8");
  if (!force && existsSync(join(root, "build", "Makefile")) && config.includes(`"nodedir": "${nodedir}"`)) command = "build";
} catch {
  // not configured yet
}
const args = [gyp, command, `--nodedir=${nodedir}`, "--jobs=max"];
console.log(`@bobbin/native-poll: node-gyp ${command} --nodedir=${nodedir}`);
const r = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit", env: process.env });
if (r.error) finish(false, String(r.error.message));
finish(r.status === 0 && existsSync(addon), `node-gyp exited with ${r.status ?? r.signal}`);
