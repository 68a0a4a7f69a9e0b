// What an echo server allocates per round trip: native-echo.js's Node servers
// (the same modes, before:MODE with BOBBIN_BEFORE=<checkout>), each run with
// V8's --trace-gc under bench/native/echo-client.c (50 connections × 64 B).
// A server's allocation over the measured window is what its collections
// freed in it (the scavenges' and mark-compacts' "before -> after" of the
// heap in use): the garbage a round trip leaves, counted rather than timed,
// so that it shows a change (an array made per read) that the load of a
// shared machine hides in the CPU rows. Rounds alternate the servers; the
// table keeps each one's median, and each `before:` mode its after/before
// ratio (the median of per-round ratios). Not part of `pnpm bench`.
//
//   node bench/src/echo-alloc.js [--rounds=N] [--seconds=S] [--modes=native,before:native,uring,…]

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { CONNS, compileNative, lines, ROUNDS, SECONDS, SIZE, stopServer, WARMUP_S } from "./echo-common.js";
import { median, medianRatio } from "./harness.js";
import { serverCommand } from "./native-echo.js";

/** A collection's line of --trace-gc (its kind, maybe a qualifier such as "(reduce)"): the heap in use before and after it, in MB. */
const COLLECTION = /(?:Scavenge|Mark-Compact|Mark-sweep)(?: \([a-z ]+\))?\s+([\d.]+)\s+\(([\d.]+)\)\s+->\s+([\d.]+)/;

/** The bytes the collections of `gcLines` freed. */
export function freedBy(gcLines) {
  let mb = 0;
  for (const line of gcLines) {
    const m = COLLECTION.exec(line);
    if (m) mb += Number(m[1]) - Number(m[3]);
  }
  return mb * 2 ** 20;
}

/** One round of `mode`: the bytes its server allocated per round trip over the measured window. */
async function allocRound(mode, client) {
  const [cmd, args, env] = serverCommand(mode, {}, true);
  const server = spawn(cmd, ["--trace-gc", ...args], { stdio: ["pipe", "pipe", "inherit"], env });
  const nextServer = lines(server, `${mode} server`);
  const gc = [];
  let measuring = false;
  createInterface({ input: server.stdout }).on("line", (line) => measuring && gc.push(line));
  try {
    const port = Number((await nextServer("PORT")).split(" ")[1]);
    const load = spawn(client, ["127.0.0.1", String(port), String(CONNS), String(SIZE), String(WARMUP_S), String(SECONDS)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const nextLoad = lines(load, "echo-client");
    await nextLoad("START");
    measuring = true;
    const [, count] = (await nextLoad("END", (SECONDS + 30) * 1000)).split(" ").map(Number);
    measuring = false;
    if (count === 0) throw new Error(`${mode}: the server answered no round trip in the window`);
    return freedBy(gc) / count;
  } finally {
    await stopServer(server);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const modes = (process.argv.find((a) => a.startsWith("--modes="))?.slice(8) ?? "native,uring,libuv").split(",");
  const { exe, cleanup } = compileNative({ client: "../native/echo-client.c" });
  try {
    const bytes = Object.fromEntries(modes.map((m) => [m, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of modes) {
        bytes[mode].push(await allocRound(mode, exe.client));
        console.log(`  round ${r + 1}/${ROUNDS} · ${mode}: ${Math.round(bytes[mode].at(-1))} B allocated per round trip`);
      }
    }
    console.log("\n| server | bytes allocated per round trip | after / before |\n|---|---:|---:|");
    for (const [mode, b] of Object.entries(bytes)) {
      const before = bytes[`before:${mode}`];
      const vs = before === undefined ? "" : `${medianRatio(b, before).toFixed(2)}×`;
      console.log(`| ${mode} | ${Math.round(median(b))} B | ${vs} |`);
    }
  } finally {
    cleanup();
  }
}
