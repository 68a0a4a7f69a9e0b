// Scenario — HTTP/1.1, keep-alive, 50 connections: requests/s and server CPU
// per request of a hello-world endpoint and of a 4 KiB JSON endpoint.
//
// Servers (bench/src/http-server.js), each in its own Node process:
//   · plain Node `http` (the anchor)
//   · @bobbin/http's serve on the libuv backend (Node's server listens itself)
//   · @bobbin/http's serve on the native (epoll) and io_uring backends of
//     @bobbin/native-poll (the backend's sockets, toStream, Node's parser)
//   · Fastify, beside them
// The load comes from `wrk` (Debian's package: installed with apt-get when
// missing), one thread, 50 keep-alive connections. Each round: 1 s of
// warm-up, then a measured window; the server's own CPU time
// (process.cpuUsage) is read at both ends of it. Rounds alternate the
// servers, and the medians are reported as ratios of plain Node `http`:
//   requests/s (higher is better; targets: libuv ≥ 0.9×, native and io_uring ≥ 1.0×)
//   server CPU per request (lower is better).
//
// BOBBIN_BEFORE=<checkout> (built) lets a mode run that checkout's Bobbin:
// `before:bobbin:native` beside `bobbin:native`, rounds interleaved.
//
//   node bench/src/http.js [--quick] [--rounds=N] [--seconds=S] [--only=hello|json] [--modes=node,bobbin:libuv,…]

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { alternateRounds, beforeEnv, CONNS, here, lines, ROUNDS, SECONDS, stopServer, WARMUP_S } from "./echo-common.js";

export const SCENARIO = "HTTP, keep-alive, 50 conns (requests/s)";

const ENDPOINTS = { hello: "/hello", json: "/json" };
const ANCHOR = "node";
/** The prefix of the modes that run BOBBIN_BEFORE's Bobbin. */
const BEFORE = "before:";
const MODES = ["node", "bobbin:libuv", "bobbin:native", "bobbin:uring", "fastify"];
const TARGETS = { "bobbin:libuv": 0.9, "bobbin:native": 1.0, "bobbin:uring": 1.0 };
const NAMES = {
  node: "plain Node `http`",
  "bobbin:libuv": "@bobbin/http, libuv backend",
  "bobbin:native": "@bobbin/http, native (epoll) backend",
  "bobbin:uring": "@bobbin/http, io_uring backend",
  fastify: "Fastify",
};

/** The path of `wrk`, installed with apt-get (Debian's package) when it is missing. */
export function ensureWrk() {
  const found = spawnSync("sh", ["-c", "command -v wrk"], { encoding: "utf8" }).stdout.trim();
  if (found !== "") return found;
  const sudo = process.getuid?.() === 0 ? [] : ["sudo", "-n"];
  const apt = (...args) => {
    const [command, ...rest] = [...sudo, "apt-get", ...args];
    execFileSync(command, rest, { stdio: "inherit" });
  };
  apt("update");
  apt("install", "-y", "wrk");
  return spawnSync("sh", ["-c", "command -v wrk"], { encoding: "utf8" }).stdout.trim();
}

/** Which modes this machine can run: io_uring only where the kernel has it, native where the addon is built. */
async function available(modes) {
  let native = null;
  try {
    native = await import("@bobbin/native-poll");
  } catch {
    // not built: the native rows are left out
  }
  return modes.filter((mode) => {
    const m = mode.startsWith(BEFORE) ? mode.slice(BEFORE.length) : mode;
    if (m === "bobbin:native") return native?.nativeAvailable() === true;
    if (m === "bobbin:uring") return native?.uringAvailable() === true;
    return true;
  });
}

/** wrk's `-d` for at least `seconds`: it takes whole seconds only (`-d1.5s` is a usage error, as `--quick`'s windows were). */
export function wrkDuration(seconds) {
  return `${Math.max(1, Math.ceil(seconds))}s`;
}

/** Runs wrk for `seconds` against `url`; returns { count, seconds } from its summary. */
function wrk(exe, url, seconds) {
  return new Promise((resolve, reject) => {
    const load = spawn(exe, ["-t1", `-c${CONNS}`, `-d${wrkDuration(seconds)}`, "--timeout", "10s", url], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    load.stdout.on("data", (d) => {
      out += d;
    });
    load.on("exit", (code) => {
      const m = /(\d+) requests in ([\d.]+)(m?s)/.exec(out);
      const errors = /Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)/.exec(out);
      if (code !== 0 || m === null) return reject(new Error(`wrk exited with code ${code}: ${out}`));
      if (errors !== null) return reject(new Error(`wrk saw errors: ${errors[0]}`));
      resolve({ count: Number(m[1]), seconds: Number(m[2]) / (m[3] === "ms" ? 1000 : 1) });
    });
  });
}

async function serverCpu(server, next) {
  server.stdin.write("cpu\n");
  const [, user, system] = (await next("CPU")).split(" ").map(Number);
  return user + system;
}

/** http-server.js's arguments for `mode` (`bobbin:native` → bobbin native). */
function serverArgs(mode) {
  return (mode.startsWith(BEFORE) ? mode.slice(BEFORE.length) : mode).split(":");
}

function beforeRoot(mode) {
  const root = process.env.BOBBIN_BEFORE;
  if (!root) throw new Error(`mode ${mode}: set BOBBIN_BEFORE to a built checkout`);
  return root;
}

/** One measured round of `mode` on `path`: { rps, cpuPerRt (µs per request), count }. */
async function httpRound(exe, mode, path) {
  const server = spawn(process.execPath, [here("./http-server.js"), ...serverArgs(mode)], {
    stdio: ["pipe", "pipe", "inherit"],
    env: mode.startsWith(BEFORE) ? beforeEnv(beforeRoot(mode)) : process.env,
  });
  const next = lines(server, `${mode} server`);
  try {
    const port = Number((await next("PORT")).split(" ")[1]);
    const url = `http://127.0.0.1:${port}${path}`;
    await wrk(exe, url, WARMUP_S);
    const cpu0 = await serverCpu(server, next);
    const { count, seconds } = await wrk(exe, url, SECONDS);
    const cpu1 = await serverCpu(server, next);
    return { rps: count / seconds, cpuPerRt: (cpu1 - cpu0) / count, count };
  } finally {
    await stopServer(server);
  }
}

/** Alternating rounds of every mode on every endpoint: { [endpoint]: { [mode]: medians } }. */
export async function measureHttp({ modes = MODES, endpoints = Object.keys(ENDPOINTS), log = console.log } = {}) {
  const unknown = modes.filter((mode) => !MODES.includes(mode.startsWith(BEFORE) ? mode.slice(BEFORE.length) : mode));
  if (unknown.length !== 0)
    throw new TypeError(`http.js: unknown mode(s) ${unknown.join(", ")}; the modes are ${MODES.join(", ")} (each also as ${BEFORE}…)`);
  const exe = ensureWrk();
  const runnable = await available(modes);
  const out = {};
  for (const endpoint of endpoints) {
    log(`▶ ${endpoint} (${ENDPOINTS[endpoint]})`);
    out[endpoint] = await alternateRounds(runnable, (mode) => httpRound(exe, mode, ENDPOINTS[endpoint]), log, "request");
  }
  return out;
}

/**
 * The result table of one endpoint, as Markdown. Ratios and verdicts are to the anchor measured
 * in the same rounds: modes that left it out (`--modes=bobbin:libuv,fastify`) get their own
 * figures only.
 */
export function httpTable(result) {
  const base = result[ANCHOR];
  const rows = [
    "| server | requests/s | vs Node `http` | server CPU / request | vs Node `http` | target |",
    "|---|---:|---:|---:|---:|---|",
  ];
  for (const [mode, r] of Object.entries(result)) {
    const target = TARGETS[mode];
    let [rpsRatio, cpuRatio, verdict] = ["—", "—", target === undefined ? "" : `no anchor: run with ${ANCHOR}`];
    if (base !== undefined) {
      const ratio = r.rps / base.rps;
      [rpsRatio, cpuRatio] = [`${ratio.toFixed(2)}×`, `${(r.cpuPerRt / base.cpuPerRt).toFixed(2)}×`];
      if (target !== undefined) verdict = `≥ ${target.toFixed(1)}× → ${ratio >= target ? "PASS" : "MISS"}`;
    }
    rows.push(
      `| ${NAMES[mode] ?? mode} | ${Math.round(r.rps).toLocaleString("en")} | ${rpsRatio} | ${r.cpuPerRt.toFixed(2)} µs | ${cpuRatio} | ${verdict} |`,
    );
  }
  return rows.join("\n");
}

/** For bench/src/main.js: one row per server and endpoint (time per request = 1 / throughput). */
export async function run(results) {
  let measured;
  try {
    measured = await measureHttp({ log: (l) => process.stdout.write(`${l}\n`) });
  } catch (e) {
    results.add({ scenario: SCENARIO, contender: "@bobbin/http", kind: "time", n: CONNS, error: e.message.split("\n")[0] });
    return;
  }
  for (const [endpoint, result] of Object.entries(measured)) {
    const base = result[ANCHOR];
    for (const [mode, r] of Object.entries(result)) {
      const ratio = r.rps / base.rps;
      const target = TARGETS[mode];
      results.add({
        scenario: `${SCENARIO}, ${endpoint}`,
        contender: NAMES[mode] ?? mode,
        kind: "time",
        n: CONNS,
        perOp: 1e9 / r.rps,
        samples: r.samples.map((s) => 1e9 / s.rps),
        note: `${Math.round(r.rps).toLocaleString("en")} requests/s (${ratio.toFixed(2)}× Node http), ${r.cpuPerRt.toFixed(2)} µs server CPU per request (${(r.cpuPerRt / base.cpuPerRt).toFixed(2)}×)`,
        ...(target === undefined
          ? {}
          : {
              targetSpec: { against: "absolute", max: Infinity, text: `≥ ${target}× Node http requests/s`, extra: () => ratio >= target },
            }),
      });
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const modes =
    process.argv
      .find((a) => a.startsWith("--modes="))
      ?.slice(8)
      .split(",") ?? MODES;
  const only =
    process.argv
      .find((a) => a.startsWith("--only="))
      ?.slice(7)
      .split(",") ?? Object.keys(ENDPOINTS);
  console.log(`▶ ${SCENARIO}: ${ROUNDS} round(s) of ${WARMUP_S} s warm-up + ${SECONDS} s per server, wrk -t1 -c${CONNS}`);
  const measured = await measureHttp({ modes, endpoints: only });
  for (const [endpoint, result] of Object.entries(measured)) console.log(`\n${endpoint} (${ENDPOINTS[endpoint]})\n\n${httpTable(result)}`);
}
