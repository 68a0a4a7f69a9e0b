// Scenario — TCP echo, 50 connections, 64-byte messages, non-pipelined.
//
// Two servers, each in its own Node process (bench/src/echo-server.js):
//   · plain Node `net`: socket.on("data", d => socket.write(d))
//   · @bobbin/unix on its libuv backend: an accept loop and one fiber per
//     connection doing `read` → `write` into a reused buffer.
// The load comes from bench/native/echo-client.c, compiled here with `cc -O2`
// into a temporary directory: one epoll loop in C, far cheaper per round trip
// than either server, so the server is the bottleneck. Each round: warm-up,
// then a measured window; the server's own CPU time (process.cpuUsage) is
// read at the start and end of the window. Rounds alternate net / Bobbin and
// the medians are reported, with Bobbin as ratios of `net`:
//   round trips per second (higher is better; target ≥ 0.9× net, DESIGN §8)
//   server CPU per round trip (lower is better).
//
//   node bench/src/echo.js [--quick] [--rounds=N] [--seconds=S] [--conns=N] [--size=B]

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const SCENARIO = "echo, 50 conns × 64 B (round trips/s)";

const QUICK = process.argv.includes("--quick");
const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
const CONNS = arg("conns", 50);
const SIZE = arg("size", 64);
const ROUNDS = arg("rounds", QUICK ? 1 : 3);
const WARMUP_S = QUICK ? 0.5 : 1;
const SECONDS = arg("seconds", QUICK ? 1.5 : 3);
const TARGET = 0.9;

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

/** Compiles the C load generator into a fresh temporary directory. */
export function buildClient() {
  const dir = mkdtempSync(join(tmpdir(), "bobbin-echo-"));
  const exe = join(dir, "echo-client");
  execFileSync("cc", ["-O2", "-o", exe, here("../native/echo-client.c")], { stdio: "inherit" });
  return { exe, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A line reader over a child's stdout: `next(prefix)` resolves with the next line starting with it. */
function lines(child, label) {
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
        resolve: (l) => (clearTimeout(timer), resolve(l)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });
}

async function serverCpu(server, next) {
  server.stdin.write("cpu\n");
  const [, user, system] = (await next("CPU")).split(" ").map(Number);
  return user + system;
}

/** One measured round against one server mode; returns { rps, cpuPerRt (µs), count }. */
async function round(mode, client) {
  const server = spawn(process.execPath, [here("./echo-server.js"), ...mode.split(":")], { stdio: ["pipe", "pipe", "inherit"] });
  const nextServer = lines(server, `${mode} server`);
  try {
    const port = Number((await nextServer("PORT")).split(" ")[1]);
    const load = spawn(client.exe, ["127.0.0.1", String(port), String(CONNS), String(SIZE), String(WARMUP_S), String(SECONDS)], {
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
    return { rps: count / elapsed, cpuPerRt: (cpu1 - cpu0) / count, count };
  } finally {
    server.stdin.write("quit\n");
    await new Promise((resolve) => (server.exitCode !== null ? resolve() : server.on("exit", resolve)));
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Runs the scenario: alternating rounds; returns { net, bobbin } medians and their ratios. */
export async function measureEcho({ modes = ["net", "bobbin"], log = console.log } = {}) {
  const client = buildClient();
  try {
    const samples = Object.fromEntries(modes.map((m) => [m, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of modes) {
        const s = await round(mode, client);
        samples[mode].push(s);
        log(`  round ${r + 1}/${ROUNDS} · ${mode}: ${Math.round(s.rps).toLocaleString("en")} round trips/s, ${s.cpuPerRt.toFixed(2)} µs server CPU per round trip`);
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
  } finally {
    client.cleanup();
  }
}

/** The result table, as Markdown (also fine in a terminal). */
export function echoTable(result, base = "net") {
  const b = result[base];
  const rows = [
    "| server | round trips/s | vs `net` | server CPU / round trip | vs `net` |",
    "|---|---:|---:|---:|---:|",
  ];
  for (const [mode, r] of Object.entries(result)) {
    const name = mode === "net" ? "plain Node `net`" : mode.startsWith("bobbin") ? `@bobbin/unix, libuv backend${mode.includes(":") ? ` (${mode.split(":")[1]})` : ""}` : mode;
    rows.push(
      `| ${name} | ${Math.round(r.rps).toLocaleString("en")} | ${(r.rps / b.rps).toFixed(2)}× | ${r.cpuPerRt.toFixed(2)} µs | ${(r.cpuPerRt / b.cpuPerRt).toFixed(2)}× |`,
    );
  }
  return rows.join("\n");
}

/** For bench/src/main.js: adds one row per server (time per round trip = 1 / throughput). */
export async function run(results) {
  let result;
  try {
    result = await measureEcho({ log: (l) => process.stdout.write(l + "\n") });
  } catch (e) {
    results.add({ scenario: SCENARIO, contender: "@bobbin/unix (libuv)", kind: "time", n: CONNS, error: e.message.split("\n")[0] });
    return;
  }
  const net = result.net;
  const bobbin = result.bobbin;
  const ratio = bobbin.rps / net.rps;
  results.add({
    scenario: SCENARIO,
    contender: "Node net",
    kind: "time",
    n: CONNS,
    perOp: 1e9 / net.rps,
    samples: net.samples.map((s) => 1e9 / s.rps),
    note: `${Math.round(net.rps).toLocaleString("en")} round trips/s, ${net.cpuPerRt.toFixed(2)} µs server CPU per round trip`,
  });
  results.add({
    scenario: SCENARIO,
    contender: "@bobbin/unix (libuv)",
    kind: "time",
    n: CONNS,
    perOp: 1e9 / bobbin.rps,
    samples: bobbin.samples.map((s) => 1e9 / s.rps),
    note: `${ratio.toFixed(2)}× net round trips/s, ${(bobbin.cpuPerRt / net.cpuPerRt).toFixed(2)}× net server CPU per round trip`,
    targetSpec: { against: "absolute", max: Infinity, text: `≥ ${TARGET}× net round trips/s`, extra: () => ratio >= TARGET },
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const modes = process.argv.find((a) => a.startsWith("--modes="))?.slice(8).split(",") ?? ["net", "bobbin"];
  console.log(`▶ ${SCENARIO}: ${ROUNDS} round(s) of ${WARMUP_S} s warm-up + ${SECONDS} s per server`);
  const result = await measureEcho({ modes });
  console.log("\n" + echoTable(result));
  if (result.net && result.bobbin) {
    const ratio = result.bobbin.rps / result.net.rps;
    console.log(`\nTarget (DESIGN §8): libuv backend ≥ ${TARGET}× net round trips/s → ${ratio.toFixed(2)}× ${ratio >= TARGET ? "PASS" : "MISS"}`);
  }
}
