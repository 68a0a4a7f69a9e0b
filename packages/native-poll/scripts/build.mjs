#!/usr/bin/env node
// Makes the C++ addon available when the package is installed: a prebuilt
// binary for this platform (prebuilds/, made by scripts/prebuild.mjs when the
// package is published) if one loads here, or else a build from source with
// node-gyp (build/Release/bobbin_native.node), against the headers of the
// Node that runs this script, never downloaded ones.
//
//   node scripts/build.mjs            # "install"/"build": on failure, explain and exit 0
//   node scripts/build.mjs --strict   # build from source; exit 1 on failure (CI, `pnpm build:native`)
//   node scripts/build.mjs --force    # a full node-gyp rebuild, even if the addon is up to date
//
// BOBBIN_NATIVE_SKIP=1 skips it. A failed build never fails installation:
// `@bobbin/unix` keeps its libuv backend, and asking for the native backend
// throws an error that says how to build it (see src/load.ts).

import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { howToBuild } from "./advice.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const strict = process.argv.includes("--strict");
const force = process.argv.includes("--force");
const addon = join(root, "build", "Release", "bobbin_native.node");
const require = createRequire(join(root, "package.json"));

function finish(ok, reason) {
  if (ok) process.exit(0);
  const text = [`@bobbin/native-poll: the native addon was not built (${reason}).`, ...howToBuild(root)].join("\n");
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

/**
 * The prebuilt binary node-gyp-build picks for this platform, when it loads
 * here; otherwise why not. Consulted only where no source build is (a source
 * build, even a stale one, is rebuilt).
 */
function prebuilt() {
  let path;
  try {
    path = require("node-gyp-build").path(root);
  } catch {
    return { path: null, why: `no prebuilt binary for ${process.platform}-${process.arch}` };
  }
  try {
    require(path);
    return { path, why: "" };
  } catch (error) {
    return { path: null, why: `the prebuilt binary ${relative(root, path)} does not load here: ${error.message}` };
  }
}

let fallback = "";
if (!strict && !force && !existsSync(addon)) {
  const { path, why } = prebuilt();
  if (path !== null) {
    console.log(`@bobbin/native-poll: using the prebuilt binary ${relative(root, path)}`);
    finish(true);
  }
  fallback = `${why}, and `;
}

const nodedir = nodeDir();
if (nodedir === null) {
  finish(
    false,
    `${fallback}no Node headers next to ${process.execPath} (expected <prefix>/include/node/node_api.h); set npm_config_nodedir`,
  );
}

let gyp;
try {
  gyp = require.resolve("node-gyp/bin/node-gyp.js");
} catch {
  finish(false, `${fallback}node-gyp is not installed (it is a dependency of this package: install the package again)`);
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
if (r.error) finish(false, `${fallback}${r.error.message}`);
finish(r.status === 0 && existsSync(addon), `${fallback}the build from source failed: node-gyp exited with ${r.status ?? r.signal}`);
