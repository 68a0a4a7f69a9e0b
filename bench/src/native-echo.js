// Scenario — the native backends (@bobbin/native-poll) side by side.
//
// 1. Echo, 50 connections × 64 B, non-pipelined, each server in its own
//    process, measured with bench/native/echo-client.c (from echo.js):
//      · C: bench/native/epoll-echo-server.c, one epoll loop (the floor)
//      · C: bench/native/uring-echo-server.c, one io_uring ring with a
//        multishot accept and multishot recvs into provided buffers (the
//        second floor; left out where io_uring is unavailable)
//      · plain Node `net` (bench/src/echo-server.js net)
//      · @bobbin/unix, libuv backend (bench/src/echo-server.js bobbin)
//      · @bobbin/unix, native backend (this file, --serve native): an accept
//        loop and one fiber per connection doing read → write into a reused
//        4 KiB buffer, the same code as the libuv server;
//      · the same with readSlot (--serve native-slot): each read lands in an
//        arena slot taken when the socket is readable, released after the write;
//      · the same code on the io_uring backend (--serve uring; uring:defer,
//        uring:coop, uring:signal pick its task-run mode).
//    Rounds alternate the servers; medians of round trips per second and of
//    the server's CPU time per round trip (getrusage / process.cpuUsage over
//    the measured window). The project's targets: native ≥ 0.9× C round trips/s,
//    ≤ 1.2× C server CPU per round trip, ≥ 1.5× net round trips/s; io_uring
//    backend ≤ 1.0× the C epoll server's CPU per round trip.
// 2. 10,000 concurrent idle connections: a server (one process per contender)
//    accepts them and parks one echo fiber (or Node socket) per connection;
//    RSS and heap (+ external memory) after gc(), before and after, divided
//    by the connection count. Contenders: readChunk servers (no buffer held
//    while idle: the bytes arrive in a chunk the backend lends) on the
//    native, io_uring and libuv backends, Node net (the anchor), the native
//    backend with readSlot, and the buffer servers (a 4 KiB buffer per
//    connection) on the native, io_uring (a multishot recv armed on each)
//    and libuv backends. The servers alternate, round after round (3 rounds;
//    1 with --quick; --idle-rounds=N), and the table keeps each one's
//    medians. Targets: readChunk ≤ 1.0× net's RSS per connection on native
//    and io_uring, ≤ 1.2× on libuv, each judged by the median of its
//    per-round ratios to net's reading in the same round (one noisy reading
//    moves one ratio, not the verdict); the rows' notes print it. The servers are
//    measured 200 ms after the last connection came: V8's young generation
//    is still as large as the burst of connections grew it then (it shrinks
//    once allocation has been low for a few seconds); --idle-settle=MS waits
//    MS instead, to measure the servers once it has shrunk.
//    Every connection is then checked to echo one message.
//
// BOBBIN_BEFORE=<checkout> (built: pnpm --filter @bobbin/native-poll... build)
// adds the servers of that checkout's Bobbin to the echo rounds, interleaved
// with the others — modes before:libuv, before:native, before:uring, each
// loading every Bobbin package from there — and prints each backend's
// after/before ratios: a before/after in one run.
//
//   node bench/src/native-echo.js [--quick] [--rounds=N] [--seconds=S] [--idle=N] [--idle-rounds=N] [--idle-settle=MS] [--only=echo|idle]
//     [--modes=c,c-uring,uring,before:uring,…] [--idle-modes=native-chunk,net,…]
//   (--serve MODE / --serve-idle MODE are the child processes' own modes)

import { spawn } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import {
  alternateRounds,
  arg,
  beforeEnv,
  bufferEcho,
  CONNS,
  compileNative,
  echoRound,
  echoRow,
  here,
  lines,
  loadCore,
  loadNative,
  loadUnix,
  ROUNDS,
  roundRatio,
  SECONDS,
  serveBobbin,
  serveCommands,
  stopServer,
  WARMUP_S,
} from "./echo-common.js";
import { fmtRatio, median, medianRatio, QUICK } from "./harness.js";
import { commitOf } from "./programs/common.js";

export const SCENARIO = "echo, 50 conns × 64 B: native backends vs C epoll";
export const IDLE_SCENARIO = "10,000 idle connections: memory per connection";

const IDLE = arg("idle", QUICK ? 2000 : 10000);
const IDLE_ROUNDS = arg("idle-rounds", QUICK ? 1 : 3);
/** How long after the last connection came the servers' memory is read. */
const IDLE_SETTLE = arg("idle-settle", 200);
/** The readChunk servers' targets: RSS per idle connection against Node net's, from the same run. */
const IDLE_TARGETS = { "native-chunk": 1.0, "uring-chunk": 1.0, "libuv-chunk": 1.2 };
// The native backend's targets were raised from 0.8× C rt/s and 1.3× C CPU per round trip.
const TARGETS = { vsC: 0.9, cpuVsC: 1.2, vsNet: 1.5, uringCpuVsC: 1.0 };

// ------------------------------------------------------------------ child servers

/** A Bobbin echo server (echo-common.js) on `backend`, with a 4096 backlog; counts its connections. */
async function serveOn(backend, body, counter) {
  const U = await loadUnix();
  const B = await loadCore();
  await serveBobbin(U, B, { backend, body, listen: { backlog: 4096 }, onAccept: () => counter.n++ });
}

/** The io_uring backend, in the task-run mode a mode `uring:<taskRun>` names. */
async function uringFactory(mode) {
  const N = await loadNative();
  const taskRun = mode.split(":")[1];
  return taskRun === undefined ? N.uringBackend : () => N.uringBackend({ taskRun });
}

async function slotEcho() {
  const U = await loadUnix();
  const N = await loadNative();
  return function* echo(client) {
    try {
      for (let slot; (slot = yield* N.readSlot(client)) !== null; ) {
        try {
          yield* U.write(client, slot.buffer, 0, slot.length);
        } finally {
          N.releaseSlot(slot);
        }
      }
    } catch {
      // a client that resets is this task's business only
    } finally {
      yield* U.close(client);
    }
  };
}

/** The per-connection fiber with readChunk: no buffer held while the connection is idle. */
async function chunkEcho() {
  const U = await loadUnix();
  return function* echo(client) {
    try {
      for (let chunk; (chunk = yield* U.readChunk(client)) !== null; ) {
        yield* U.write(client, chunk.bytes);
        chunk.release();
      }
    } catch {
      // a client that resets is this task's business only
    } finally {
      yield* U.close(client);
    }
  };
}

async function serve(mode) {
  const counter = { n: 0 };
  serveCommands({ count: () => counter.n });
  if (mode === "native") return serveOn((await loadNative()).nativeBackend, bufferEcho(await loadUnix()), counter);
  if (mode === "native-slot") return serveOn((await loadNative()).nativeBackend, await slotEcho(), counter);
  if (mode === "native-chunk") return serveOn((await loadNative()).nativeBackend, await chunkEcho(), counter);
  if (mode === "uring-chunk") return serveOn((await loadNative()).uringBackend, await chunkEcho(), counter);
  if (mode === "libuv-chunk") return serveOn((await loadUnix()).libuv, await chunkEcho(), counter);
  if (mode.startsWith("uring")) return serveOn(await uringFactory(mode), bufferEcho(await loadUnix()), counter);
  if (mode === "libuv") return serveOn((await loadUnix()).libuv, bufferEcho(await loadUnix()), counter);
  if (mode === "net") {
    const server = net.createServer((socket) => {
      counter.n++;
      socket.on("data", (data) => socket.write(data));
      socket.on("error", () => {});
    });
    server.listen({ port: 0, host: "127.0.0.1", backlog: 4096 }, () => process.stdout.write(`PORT ${server.address().port}\n`));
    return;
  }
  console.error(`unknown server mode ${mode}`);
  process.exit(2);
}

// ------------------------------------------------------------------ measuring

export function serverCommand(mode, bin, own = false) {
  if (mode.startsWith(BEFORE)) {
    const root = process.env.BOBBIN_BEFORE;
    if (!root) throw new Error(`mode ${mode}: set BOBBIN_BEFORE to a built checkout`);
    return [process.execPath, ["--expose-gc", here("./native-echo.js"), "--serve", mode.slice(BEFORE.length)], beforeEnv(root)];
  }
  if (own && mode !== "c") return [process.execPath, ["--expose-gc", here("./native-echo.js"), "--serve", mode]];
  switch (mode) {
    case "c":
      return [bin.server, []];
    case "c-uring":
      return [bin.uringServer, []];
    case "net":
      return [process.execPath, [here("./echo-server.js"), "net"]];
    case "libuv":
      return [process.execPath, [here("./echo-server.js"), "bobbin"]];
    default:
      return [process.execPath, ["--expose-gc", here("./native-echo.js"), "--serve", mode]];
  }
}

const NAMES = {
  c: "C epoll server (floor)",
  "c-uring": "C io_uring server (floor)",
  net: "plain Node `net`",
  libuv: "@bobbin/unix, libuv backend",
  native: "@bobbin/unix, native backend",
  "native-slot": "native backend, readSlot (arena slots)",
  "native-chunk": "native backend, readChunk (arena slots lent)",
  "uring-chunk": "io_uring backend, readChunk (provided buffers lent)",
  "libuv-chunk": "libuv backend, readChunk (Node's chunks lent)",
  uring: "@bobbin/unix, io_uring backend",
};

/** The prefix of the modes that run BOBBIN_BEFORE's Bobbin. */
const BEFORE = "before:";
/** What BOBBIN_BEFORE adds to the default modes: each backend whose before/after is measured. */
const BEFORE_MODES = ["before:libuv", "before:native", "before:uring"];

/** A mode's name in the tables (`uring:coop` → the io_uring backend, COOP_TASKRUN). */
function nameOf(mode) {
  if (mode.startsWith(BEFORE)) return `${nameOf(mode.slice(BEFORE.length))}, before (${commitOf(process.env.BOBBIN_BEFORE)})`;
  if (mode.startsWith("uring:")) return `${NAMES.uring} (${mode.slice(6)})`;
  return NAMES[mode] ?? mode;
}

/** Whether the io_uring backend (and so the C io_uring server) can work here, and why not. */
export async function uringHere() {
  try {
    return (await loadNative()).uringSupport();
  } catch (e) {
    return { available: false, reason: e.message.split("\n")[0] };
  }
}

/** The echo scenario: alternating rounds of every mode; medians per mode. The io_uring modes are left out where io_uring is unavailable. */
export async function measureNativeEcho({
  modes = ["c", "c-uring", "net", "libuv", "native", "native-slot", "uring", ...(process.env.BOBBIN_BEFORE ? BEFORE_MODES : [])],
  log = console.log,
} = {}) {
  const uring = await uringHere();
  const uringModes = (m) => m === "c-uring" || m.replace(BEFORE, "").startsWith("uring");
  if (!uring.available && modes.some(uringModes)) {
    log(`  io_uring rows left out: ${uring.reason}`);
    modes = modes.filter((m) => !uringModes(m));
  }
  const sources = { client: "../native/echo-client.c", server: "../native/epoll-echo-server.c" };
  if (modes.includes("c-uring")) sources.uringServer = "../native/uring-echo-server.c";
  const { exe: bin, cleanup } = compileNative(sources);
  try {
    return await alternateRounds(modes, (mode) => echoRound(serverCommand(mode, bin), bin.client, mode), log);
  } finally {
    cleanup();
  }
}

/** Markdown table of the echo scenario, ratios against the C server. */
export function nativeEchoTable(result) {
  const c = result.c;
  const rows = ["| server | round trips/s | vs C | server CPU / round trip | vs C |", "|---|---:|---:|---:|---:|"];
  for (const [mode, r] of Object.entries(result)) {
    rows.push(
      `| ${nameOf(mode)} | ${Math.round(r.rps).toLocaleString("en")} | ${c ? `${(r.rps / c.rps).toFixed(2)}×` : "–"} | ` +
        `${r.cpuPerRt.toFixed(2)} µs | ${c ? `${(r.cpuPerRt / c.cpuPerRt).toFixed(2)}×` : "–"} |`,
    );
  }
  return rows.join("\n");
}

/** PASS/MISS lines for the project's targets. */
export function nativeEchoVerdicts(result) {
  const { c, net: plain, native, uring } = result;
  const out = [];
  if (c && uring) {
    const w = uring.cpuPerRt / c.cpuPerRt;
    out.push(
      `io_uring ≤ ${TARGETS.uringCpuVsC}× C epoll server CPU per round trip: ${w.toFixed(2)}× ${w <= TARGETS.uringCpuVsC ? "PASS" : "MISS"}`,
    );
  }
  if (!native) return out;
  if (c) {
    const v = native.rps / c.rps;
    out.push(`native ≥ ${TARGETS.vsC}× C round trips/s: ${v.toFixed(2)}× ${v >= TARGETS.vsC ? "PASS" : "MISS"}`);
    const w = native.cpuPerRt / c.cpuPerRt;
    out.push(`native ≤ ${TARGETS.cpuVsC}× C server CPU per round trip: ${w.toFixed(2)}× ${w <= TARGETS.cpuVsC ? "PASS" : "MISS"}`);
  }
  if (plain) {
    const v = native.rps / plain.rps;
    out.push(`native ≥ ${TARGETS.vsNet}× plain Node net round trips/s: ${v.toFixed(2)}× ${v >= TARGETS.vsNet ? "PASS" : "MISS"}`);
  }
  return out;
}

/**
 * Each backend measured before and after (modes `before:<mode>` beside
 * `<mode>`): the after/before ratios of round trips per second (higher is
 * better) and of server CPU per round trip (lower is better), each the median
 * of per-round ratios (the servers alternate, so the two readings of a round
 * share its load), with each side's against its anchor (C epoll; Node `net`
 * for libuv).
 */
export function beforeAfterTable(result) {
  const rows = [
    "| backend | rt/s after / before | CPU/rt after / before | after vs anchor (rt/s, CPU/rt) | before vs anchor (rt/s, CPU/rt) |",
    "|---|---:|---:|---:|---:|",
  ];
  for (const mode of Object.keys(result)) {
    if (!mode.startsWith(BEFORE)) continue;
    const now = mode.slice(BEFORE.length);
    const after = result[now];
    const before = result[mode];
    if (after === undefined) continue;
    const anchorMode = now === "libuv" ? "net" : "c";
    const anchor = result[anchorMode];
    const vs = (m) =>
      anchor
        ? `${roundRatio(m, anchor, "rps").toFixed(2)}×, ${roundRatio(m, anchor, "cpuPerRt").toFixed(2)}× ${anchorMode === "c" ? "C" : "net"}`
        : "–";
    rows.push(
      `| ${nameOf(now)} | ${roundRatio(after, before, "rps").toFixed(2)}× | ${roundRatio(after, before, "cpuPerRt").toFixed(2)}× | ${vs(after)} | ${vs(before)} |`,
    );
  }
  return rows.length > 2 ? rows.join("\n") : "";
}

// ------------------------------------------------------------------ idle connections

async function memOf(server, next) {
  server.stdin.write("mem\n");
  const [, rss, heap, external, count, young] = (await next("MEM", 60_000)).split(" ").map(Number);
  return { rss, heap, external, count, young };
}

/** Opens `n` connections to `port` (in batches, so the listen queue never overflows). */
export async function openMany(port, n) {
  const sockets = [];
  const BATCH = 256;
  for (let i = 0; i < n; i += BATCH) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + BATCH); j++) {
      batch.push(
        new Promise((resolve, reject) => {
          const s = net.connect({ port, host: "127.0.0.1" }, () => resolve(s));
          s.once("error", reject);
        }),
      );
    }
    sockets.push(...(await Promise.all(batch)));
  }
  return sockets;
}

/** Sends one message on every connection and checks the echo (all in flight at once, bounded in time). */
async function checkEchoes(sockets) {
  await Promise.all(
    sockets.map(
      (s, i) =>
        new Promise((resolve, reject) => {
          const msg = Buffer.from(`ping ${i}\n`);
          let got = Buffer.alloc(0);
          const timer = setTimeout(() => reject(new Error(`connection ${i}: no echo`)), 30_000);
          s.on("data", (d) => {
            got = Buffer.concat([got, d]);
            if (got.length >= msg.length) {
              clearTimeout(timer);
              s.removeAllListeners("data");
              if (!got.equals(msg)) reject(new Error(`connection ${i}: wrong echo`));
              else resolve();
            }
          });
          s.write(msg);
        }),
    ),
  );
}

async function idleRound(mode, n) {
  const [cmd, args, env] = serverCommand(mode, {}, true);
  const server = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"], env });
  const next = lines(server, `${mode} server`);
  let sockets = [];
  try {
    const port = Number((await next("PORT")).split(" ")[1]);
    const before = await memOf(server, next);
    sockets = await openMany(port, n);
    let after;
    for (let tries = 0; tries < 200; tries++) {
      await new Promise((r) => setTimeout(r, 50));
      after = await memOf(server, next);
      if (after.count >= n) break;
    }
    if (after.count < n) throw new Error(`${mode}: the server accepted ${after.count} of ${n} connections`);
    await new Promise((r) => setTimeout(r, IDLE_SETTLE)); // every fiber parked
    after = await memOf(server, next);
    await checkEchoes(sockets);
    return {
      rssPerConn: (after.rss - before.rss) / n,
      heapPerConn: (after.heap + after.external - before.heap - before.external) / n,
      youngPerConn: (after.young - before.young) / n,
    };
  } finally {
    for (const s of sockets) s.destroy();
    await stopServer(server);
  }
}

const IDLE_MODES = ["native-chunk", "uring-chunk", "libuv-chunk", "net", "native-slot", "native", "uring", "libuv"];

/**
 * Each server's medians over the rounds in `runs` (mode → its readings, round
 * by round), and, beside `net`'s, `vsNet`: the median of its per-round ratios
 * of RSS per connection to `net`'s of the same round.
 */
export function idleSummary(runs) {
  const net = runs.net;
  const out = {};
  for (const [mode, rs] of Object.entries(runs)) {
    out[mode] = {
      rssPerConn: median(rs.map((r) => r.rssPerConn)),
      heapPerConn: median(rs.map((r) => r.heapPerConn)),
      youngPerConn: median(rs.map((r) => r.youngPerConn)),
      rounds: rs.length,
      samples: rs.map((r) => r.rssPerConn),
      ...(net && mode !== "net"
        ? {
            vsNet: medianRatio(
              rs.map((r) => r.rssPerConn),
              net.map((r) => r.rssPerConn),
            ),
          }
        : {}),
    };
  }
  return out;
}

export async function measureIdle({ modes = IDLE_MODES, n = IDLE, rounds = IDLE_ROUNDS, log = console.log } = {}) {
  const uring = await uringHere();
  if (!uring.available && modes.some((m) => m.startsWith("uring"))) {
    log(`  io_uring rows left out: ${uring.reason}`);
    modes = modes.filter((m) => !m.startsWith("uring"));
  }
  const runs = Object.fromEntries(modes.map((m) => [m, []]));
  for (let round = 0; round < rounds; round++) {
    for (const mode of modes) {
      const r = await idleRound(mode, n);
      runs[mode].push(r);
      log(
        `  ${mode}: ${r.rssPerConn.toFixed(0)} B RSS (${r.youngPerConn.toFixed(0)} B of it V8's young generation), ${r.heapPerConn.toFixed(0)} B heap+external per connection`,
      );
    }
  }
  return idleSummary(runs);
}

/** PASS/MISS of the readChunk servers against Node net's RSS per connection, by the median of per-round ratios. */
export function idleVerdicts(result) {
  return Object.entries(IDLE_TARGETS)
    .filter(([mode]) => result[mode]?.vsNet !== undefined)
    .map(([mode, max]) => {
      const { vsNet, rounds } = result[mode];
      return `${NAMES[mode]}: ≤ ${max.toFixed(1)}× Node net's RSS per idle connection: ${vsNet.toFixed(2)}× (the median of ${rounds} per-round ratios) ${vsNet <= max ? "PASS" : "MISS"}`;
    });
}

/**
 * bench/src/main.js's rows of `result` (idleSummary's): each server's median
 * RSS per connection; a readChunk server's target is judged by `paired`, the
 * median of its per-round ratios to net's, which its note prints.
 */
export function idleRows(result, n = IDLE) {
  return Object.entries(result).map(([mode, m]) => {
    const max = IDLE_TARGETS[mode];
    const paired = m.vsNet;
    return {
      scenario: IDLE_SCENARIO,
      contender: mode,
      kind: "bytes",
      n,
      perOp: m.rssPerConn,
      samples: m.samples,
      ...(mode === "net" ? { anchor: "net" } : {}),
      ...(max !== undefined
        ? {
            targetSpec: {
              against: "net",
              max: Infinity,
              text: `≤ ${max.toFixed(1)}× net's RSS/connection, per round`,
              extra: (row) => row.paired <= max,
            },
          }
        : {}),
      ...(paired !== undefined ? { paired } : {}),
      note:
        `RSS per connection, the median of ${m.rounds} round(s)` +
        (paired !== undefined ? `, ${fmtRatio(paired)} net's (the median of per-round ratios)` : "") +
        `; of it V8's young generation ${m.youngPerConn.toFixed(0)} B; JS heap + external ${m.heapPerConn.toFixed(0)} B`,
    };
  });
}

export function idleTable(result, n = IDLE) {
  const rows = [
    `| server (${n.toLocaleString("en")} idle connections) | RSS / connection | vs net, per round | JS heap + external / connection |`,
    "|---|---:|---:|---:|",
  ];
  const names = {
    ...NAMES,
    native: "native backend, 4 KiB buffer per connection",
    uring: "io_uring backend, 4 KiB buffer per connection (received into shared buffers)",
    libuv: "libuv backend, 4 KiB buffer per connection",
  };
  for (const [mode, r] of Object.entries(result)) {
    const vs = mode === "net" ? "1.00×" : fmtRatio(r.vsNet);
    rows.push(`| ${names[mode] ?? mode} | ${(r.rssPerConn / 1024).toFixed(2)} KiB | ${vs} | ${(r.heapPerConn / 1024).toFixed(2)} KiB |`);
  }
  return rows.join("\n");
}

// ------------------------------------------------------------------ bench/src/main.js

/** For bench/src/main.js: one row per server (time per round trip = 1 / throughput), then the idle rows. */
export async function run(results) {
  const log = (l) => process.stdout.write(`${l}\n`);
  try {
    const r = await measureNativeEcho({ log });
    for (const [mode, m] of Object.entries(r)) {
      const row = echoRow(SCENARIO, nameOf(mode), m, {
        ...(mode === "c" ? { anchor: "floor" } : {}),
        note:
          `${Math.round(m.rps).toLocaleString("en")} round trips/s, ${m.cpuPerRt.toFixed(2)} µs server CPU per round trip` +
          (r.c && mode !== "c" ? ` (${(m.rps / r.c.rps).toFixed(2)}× C rt/s, ${(m.cpuPerRt / r.c.cpuPerRt).toFixed(2)}× C CPU)` : ""),
      });
      if (mode === "native" && r.c && r.net) {
        const ok = m.rps >= TARGETS.vsC * r.c.rps && m.cpuPerRt <= TARGETS.cpuVsC * r.c.cpuPerRt && m.rps >= TARGETS.vsNet * r.net.rps;
        row.targetSpec = {
          against: "absolute",
          max: Infinity,
          text: `≥ ${TARGETS.vsC}× C rt/s, ≤ ${TARGETS.cpuVsC}× C CPU/rt, ≥ ${TARGETS.vsNet}× net`,
          extra: () => ok,
        };
      }
      if (mode === "uring" && r.c) {
        const ok = m.cpuPerRt <= TARGETS.uringCpuVsC * r.c.cpuPerRt;
        row.targetSpec = { against: "absolute", max: Infinity, text: "≤ 1.0× C epoll CPU/rt", extra: () => ok };
      }
      results.add(row);
    }
    for (const v of nativeEchoVerdicts(r)) log(`  ${v}`);
    const beforeAfter = beforeAfterTable(r);
    if (beforeAfter) log(beforeAfter);
  } catch (e) {
    results.add({ scenario: SCENARIO, contender: NAMES.native, kind: "time", n: CONNS, error: e.message.split("\n")[0] });
  }
  try {
    const idle = await measureIdle({ log });
    for (const row of idleRows(idle)) results.add(row);
    for (const v of idleVerdicts(idle)) log(`  ${v}`);
  } catch (e) {
    results.add({ scenario: IDLE_SCENARIO, contender: "native-slot", kind: "bytes", n: IDLE, error: e.message.split("\n")[0] });
  }
}

// ------------------------------------------------------------------ command line

const serveAt = process.argv.indexOf("--serve");
if (serveAt >= 0) {
  await serve(process.argv[serveAt + 1]);
} else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7);
  if (only !== "idle") {
    const modes = process.argv
      .find((a) => a.startsWith("--modes="))
      ?.slice(8)
      .split(",");
    console.log(`▶ ${SCENARIO}: ${ROUNDS} round(s) of ${WARMUP_S} s warm-up + ${SECONDS} s per server`);
    const result = await measureNativeEcho(modes ? { modes } : {});
    console.log(`\n${nativeEchoTable(result)}`);
    const beforeAfter = beforeAfterTable(result);
    if (beforeAfter) console.log(`\n${beforeAfter}`);
    const verdicts = nativeEchoVerdicts(result);
    if (verdicts.length) console.log(`\n${verdicts.join("\n")}`);
  }
  if (only !== "echo") {
    console.log(`\n▶ ${IDLE_SCENARIO} (${IDLE.toLocaleString("en")} connections)`);
    const modes = process.argv
      .find((a) => a.startsWith("--idle-modes="))
      ?.slice(13)
      .split(",");
    const idle = await measureIdle(modes ? { modes } : {});
    console.log(`\n${idleTable(idle)}`);
    const verdicts = idleVerdicts(idle);
    if (verdicts.length) console.log(`\n${verdicts.join("\n")}`);
  }
}
