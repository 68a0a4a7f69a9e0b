// What the echo benchmarks share (bench/src/echo.js, bench/src/native-echo.js
// and their server processes, bench/src/echo-server.js and
// `native-echo.js --serve`): the command-line settings, loading the Bobbin
// packages, the servers' stdin protocol, the Bobbin echo server, the C
// programs of bench/native, and one measured round against one server.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import v8 from "node:v8";
import { median, medianRatio, QUICK } from "./harness.js";

/** `--name=<number>` from the command line, or `fallback`. */
export const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
export const CONNS = arg("conns", 50);
export const SIZE = arg("size", 64);
export const ROUNDS = arg("rounds", QUICK ? 1 : 3);
export const WARMUP_S = QUICK ? 0.5 : 1;
export const SECONDS = arg("seconds", QUICK ? 1.5 : 3);

/** A path relative to bench/src. */
export const here = (p) => fileURLToPath(new URL(p, import.meta.url));

// ------------------------------------------------------------------ loading

/** Imports the first of `candidates` (module specifiers; empty ones skipped) that loads. */
export async function importFirst(candidates) {
  let lastError;
  for (const spec of candidates) {
    if (!spec) continue;
    try {
      return await import(spec);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

const dist = (pkg) => new URL(`../../packages/${pkg}/dist/index.js`, import.meta.url).href;

/**
 * The environment of a server that runs the Bobbin of another checkout
 * (built): BOBBIN_BEFORE=<checkout>, as for channel-ops.js and programs.js,
 * with BOBBIN_SERVE_BEFORE=1 so that only that server, not the measuring
 * process, loads it.
 */
export const beforeEnv = (root) => ({ ...process.env, BOBBIN_BEFORE: root, BOBBIN_SERVE_BEFORE: "1" });

/**
 * Loads a Bobbin package: in a "before" server, the other checkout's build
 * only (every package from one checkout: its unix runs on its own core);
 * otherwise the first of `candidates` that loads.
 */
function loadPackage(pkg, candidates) {
  if (process.env.BOBBIN_SERVE_BEFORE === "1")
    return import(pathToFileURL(resolve(process.env.BOBBIN_BEFORE, `packages/${pkg}/dist/index.js`)).href);
  return importFirst(candidates);
}
export const loadCore = () => loadPackage("core", ["@bobbin/core", dist("core")]);
export const loadUnix = () => loadPackage("unix", ["@bobbin/unix", dist("unix")]);
export const loadNative = () => loadPackage("native-poll", ["@bobbin/native-poll", dist("native-poll")]);
export const loadHttp = () => loadPackage("http", ["@bobbin/http", dist("http")]);

// ------------------------------------------------------------------ server side

/** What the "dump" command answers; a Bobbin server's is set by serveBobbin. */
let describeServer = async () => "no dump: this server is not a Bobbin run";

/**
 * The servers' stdin protocol: "cpu" → "CPU <user µs> <system µs>"
 * (process.cpuUsage()), "mem" → "MEM <rss> <heapUsed> <external> <count> <young>"
 * after gc() (young: the bytes of V8's young generation in memory), "heap <file>" →
 * "HEAP <file>" once a heap snapshot is written there (bench/src/idle-heap.js),
 * "dump" → "DUMP <JSON string>" (a Bobbin server's task tree and backend
 * counters, for a round that went wrong), "quit" → exit.
 */
export function serveCommands({ count } = {}) {
  createInterface({ input: process.stdin }).on("line", (line) => {
    if (line === "dump") {
      const answer = (text) => process.stdout.write(`DUMP ${JSON.stringify(text)}\n`);
      describeServer().then(answer, (error) => answer(`the dump failed: ${error?.stack ?? error}`));
    } else if (line === "cpu") {
      const { user, system } = process.cpuUsage();
      process.stdout.write(`CPU ${user} ${system}\n`);
    } else if (line === "mem") {
      globalThis.gc?.();
      globalThis.gc?.();
      const m = process.memoryUsage();
      // The young generation's pages in use (V8 counts a page up to where allocation reached in it).
      const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.physical_space_size ?? 0;
      process.stdout.write(`MEM ${m.rss} ${m.heapUsed} ${m.external} ${count?.() ?? 0} ${young}\n`);
    } else if (line.startsWith("heap ")) {
      const file = line.slice(5);
      v8.writeHeapSnapshot(file);
      process.stdout.write(`HEAP ${file}\n`);
    } else if (line === "quit") process.exit(0);
  });
}

/** The per-connection fiber of the Bobbin echo servers: read → write into a reused 4 KiB buffer. */
export function bufferEcho(U) {
  return function* echo(client) {
    const buf = Buffer.allocUnsafe(4096);
    try {
      for (let n; (n = yield* U.read(client, buf)) > 0; ) yield* U.write(client, buf, 0, n);
    } catch {
      // a client that resets is this task's business only
    } finally {
      yield* U.close(client);
    }
  };
}

/**
 * A Bobbin echo server on 127.0.0.1: prints "PORT <n>", then an accept loop
 * that spawns `body(client)` per connection (reaping finished ones).
 * `listen` is bindAndListen's options (e.g. a backlog), `onAccept` is called per connection.
 * The "dump" command answers with the run's task tree and the backend's counters, if it has some.
 */
export function serveBobbin(U, B, { backend, body, listen, onAccept = () => {}, options = {} }) {
  let made = null;
  describeServer = async () => {
    const stats = made?.stats === undefined ? "" : `backend ${made.name}: ${JSON.stringify(made.stats)}\n`;
    return `${B.formatDump(await B.dump())}${stats}`;
  };
  return U.run(
    function* acceptLoop() {
      const server = U.tcpv4();
      yield* U.bindAndListen(server, { host: "127.0.0.1", port: 0 }, listen);
      process.stdout.write(`PORT ${U.getsockname(server).port}\n`);
      const clients = B.orphans();
      for (;;) {
        for (let t = B.care(clients); t; t = B.care(clients)) yield* B.awaitTask(t);
        const [client] = yield* U.accept(server);
        onAccept();
        B.spawn({ orphans: clients }, body, client);
      }
    },
    { backend: (domain) => (made = backend(domain)), ...options },
  );
}

// ------------------------------------------------------------------ measuring side

/**
 * Compiles C programs of bench/native (`{ name: "../native/x.c" }`) with
 * `cc -O2` into a fresh temporary directory: `{ exe: { name: path }, cleanup }`.
 */
export function compileNative(sources) {
  const dir = mkdtempSync(join(tmpdir(), "bobbin-echo-"));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    const exe = {};
    for (const [name, source] of Object.entries(sources)) {
      exe[name] = join(dir, name);
      execFileSync("cc", ["-O2", "-o", exe[name], here(source)], { stdio: "inherit" });
    }
    return { exe, cleanup };
  } catch (error) {
    cleanup();
    throw error;
  }
}

/** A line reader over a child's stdout: `next(prefix)` resolves with the next line starting with it. */
export function lines(child, label) {
  const waiting = [];
  const buffered = [];
  let ended = false;
  createInterface({ input: child.stdout }).on("line", (line) => {
    const i = waiting.findIndex((w) => line.startsWith(w.prefix));
    if (i >= 0) waiting.splice(i, 1)[0].resolve(line);
    else buffered.push(line);
  });
  child.on("exit", (code) => {
    ended = true;
    for (const w of waiting.splice(0)) w.reject(new Error(`${label} exited (code ${code}) before printing ${w.prefix}`));
  });
  return (prefix, ms = 30_000) =>
    new Promise((resolve, reject) => {
      const j = buffered.findIndex((l) => l.startsWith(prefix));
      if (j >= 0) return resolve(buffered.splice(j, 1)[0]);
      if (ended) return reject(new Error(`${label} has exited`));
      const timer = setTimeout(() => reject(new Error(`${label}: no ${prefix} after ${ms / 1000}s`)), ms);
      waiting.push({
        prefix,
        resolve: (l) => {
          clearTimeout(timer);
          resolve(l);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
}

/** Asks a server process to quit and waits for it to exit; killed after `ms` (a server stuck in a callback never reads "quit"). */
export async function stopServer(server, ms = 10_000) {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((resolve) => server.on("exit", resolve));
  server.stdin.write("quit\n");
  const timer = setTimeout(() => server.kill("SIGKILL"), ms);
  await exited;
  clearTimeout(timer);
}

async function serverCpu(server, next) {
  server.stdin.write("cpu\n");
  const [, user, system] = (await next("CPU")).split(" ").map(Number);
  return user + system;
}

/**
 * One measured round: starts the server (`[command, args, env]`; env: this
 * process's when left out), runs the C load generator `client` against it
 * (warm-up, then the measured window) and reads the server's CPU time at both
 * ends of the window. Returns { rps, cpuPerRt (µs), count }.
 */
export async function echoRound([cmd, args, env = process.env], client, label) {
  const server = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"], env });
  const nextServer = lines(server, `${label} server`);
  try {
    const port = Number((await nextServer("PORT")).split(" ")[1]);
    const load = spawn(client, ["127.0.0.1", String(port), String(CONNS), String(SIZE), String(WARMUP_S), String(SECONDS)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const nextLoad = lines(load, "echo-client");
    const exited = new Promise((resolve) => load.on("exit", resolve));
    await nextLoad("START");
    const cpu0 = await serverCpu(server, nextServer);
    const end = await nextLoad("END", (SECONDS + 30) * 1000);
    const cpu1 = await serverCpu(server, nextServer);
    const code = await exited;
    if (code !== 0) throw new Error(`echo-client exited with code ${code}`);
    const [, count, elapsed] = end.split(" ").map(Number);
    if (count === 0) throw new Error(`${label}: ${await noRoundTrips(server, nextServer)}`);
    return { rps: count / elapsed, cpuPerRt: (cpu1 - cpu0) / count, count };
  } finally {
    await stopServer(server);
  }
}

/**
 * Why a round counted nothing, with what the server says of itself (its
 * dump; a server without one, such as a C server, does not answer): a round
 * that measured a stuck server is a failure to look into, not a sample.
 */
async function noRoundTrips(server, nextServer) {
  server.stdin.write("dump\n");
  const dump = await nextServer("DUMP", 5000).then(
    (line) => JSON.parse(line.slice("DUMP ".length)),
    () => "(the server gave no dump within 5 s)",
  );
  return (
    `the server answered no round trip in the ${SECONDS} s measured (${CONNS} connections, ` +
    `after ${WARMUP_S} s of warm-up); it may have stopped making progress. Its dump:\n${dump}`
  );
}

/**
 * ROUNDS rounds, each running `round(mode)` for every mode in turn (so the
 * servers alternate); per mode the medians of round trips (or `unit`s) per
 * second and of server CPU per round trip, and the samples.
 */
export async function alternateRounds(modes, round, log, unit = "round trip") {
  const samples = Object.fromEntries(modes.map((m) => [m, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of modes) {
      const s = await round(mode);
      samples[mode].push(s);
      log(
        `  round ${r + 1}/${ROUNDS} · ${mode}: ${Math.round(s.rps).toLocaleString("en")} ${unit}s/s, ${s.cpuPerRt.toFixed(2)} µs server CPU per ${unit}`,
      );
    }
  }
  const out = {};
  for (const mode of modes) {
    out[mode] = {
      rps: median(samples[mode].map((s) => s.rps)),
      cpuPerRt: median(samples[mode].map((s) => s.cpuPerRt)),
      samples: samples[mode],
    };
  }
  return out;
}

/**
 * How server `a` compares with server `b` of the same `alternateRounds`, on
 * `key` ("rps" or "cpuPerRt"): the median of their per-round ratios.
 */
export function roundRatio(a, b, key) {
  return medianRatio(
    a.samples.map((s) => s[key]),
    b.samples.map((s) => s[key]),
  );
}

/** A row of bench/src/main.js's table for one server's medians `m` (time per round trip = 1 / throughput). */
export function echoRow(scenario, contender, m, extra = {}) {
  return {
    scenario,
    contender,
    kind: "time",
    n: CONNS,
    perOp: 1e9 / m.rps,
    samples: m.samples.map((s) => 1e9 / s.rps),
    ...extra,
  };
}
