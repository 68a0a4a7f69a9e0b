// Scenario — TCP echo, 50 connections, 64-byte messages, non-pipelined.
//
// Servers, each in its own Node process (bench/src/echo-server.js):
//   · plain Node `net`: socket.on("data", d => socket.write(d))
//   · @bobbin/unix on its libuv backend: an accept loop and one fiber per
//     connection doing `read` → `write` into a reused buffer;
//   · in main.js's run, the same Bobbin server with run's flightRecorder (a
//     ring of 4,096 events): the recorder's cost, as the median of per-round
//     ratios of CPU per round trip (the project's target: ≤ 1.05×), and with
//     each connection's task in an AsyncLocalStorage store of its own (what
//     a store costs; no target).
// The load comes from bench/native/echo-client.c, compiled here with `cc -O2`
// into a temporary directory: one epoll loop in C, far cheaper per round trip
// than any of the servers, so the server is the bottleneck. Each round: warm-up,
// then a measured window; the server's own CPU time (process.cpuUsage) is
// read at the start and end of the window. Rounds alternate the servers and
// the medians are reported, with the plain Bobbin server as ratios of `net`:
//   round trips per second (higher is better; the project's target: ≥ 0.9× net)
//   server CPU per round trip (lower is better).
//
//   node bench/src/echo.js [--quick] [--rounds=N] [--seconds=S] [--conns=N] [--size=B]

import { fileURLToPath } from "node:url";
import { alternateRounds, CONNS, compileNative, echoRound, echoRow, here, ROUNDS, roundRatio, SECONDS, WARMUP_S } from "./echo-common.js";

export const SCENARIO = "echo, 50 conns × 64 B (round trips/s)";

const TARGET = 0.9;

/** Compiles the C load generator into a fresh temporary directory. */
export function buildClient() {
  const { exe, cleanup } = compileNative({ "echo-client": "../native/echo-client.c" });
  return { exe: exe["echo-client"], cleanup };
}

/** Runs the scenario: alternating rounds; returns { net, bobbin } medians and their ratios. */
export async function measureEcho({ modes = ["net", "bobbin"], log = console.log } = {}) {
  const client = buildClient();
  try {
    // A mode is echo-server.js's arguments joined by ":" (e.g. "bobbin:immediate").
    return await alternateRounds(
      modes,
      (mode) => echoRound([process.execPath, [here("./echo-server.js"), ...mode.split(":")]], client.exe, mode),
      log,
    );
  } finally {
    client.cleanup();
  }
}

/** The result table, as Markdown (also fine in a terminal). */
export function echoTable(result, base = "net") {
  const b = result[base];
  const rows = ["| server | round trips/s | vs `net` | server CPU / round trip | vs `net` |", "|---|---:|---:|---:|---:|"];
  for (const [mode, r] of Object.entries(result)) {
    const name =
      mode === "net"
        ? "plain Node `net`"
        : mode.startsWith("bobbin")
          ? `@bobbin/unix, libuv backend${mode.startsWith("bobbin-store") ? ", a store per connection" : ""}${mode.includes(":") ? ` (${mode.split(":").slice(1).join(", ")})` : ""}`
          : mode;
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
    result = await measureEcho({ modes: ["net", "bobbin", RECORDER, STORE], log: (l) => process.stdout.write(`${l}\n`) });
  } catch (e) {
    results.add({ scenario: SCENARIO, contender: "@bobbin/unix (libuv)", kind: "time", n: CONNS, error: e.message.split("\n")[0] });
    return;
  }
  const net = result.net;
  const bobbin = result.bobbin;
  const ratio = bobbin.rps / net.rps;
  results.add(
    echoRow(SCENARIO, "Node net", net, {
      note: `${Math.round(net.rps).toLocaleString("en")} round trips/s, ${net.cpuPerRt.toFixed(2)} µs server CPU per round trip`,
    }),
  );
  results.add(
    echoRow(SCENARIO, "@bobbin/unix (libuv)", bobbin, {
      note: `${ratio.toFixed(2)}× net round trips/s, ${(bobbin.cpuPerRt / net.cpuPerRt).toFixed(2)}× net server CPU per round trip`,
      targetSpec: { against: "absolute", max: Infinity, text: `≥ ${TARGET}× net round trips/s`, extra: () => ratio >= TARGET },
    }),
  );
  const recorder = result[RECORDER];
  const cost = costOver(bobbin, recorder);
  results.add(
    echoRow(SCENARIO, "@bobbin/unix (libuv), flightRecorder: 4096", recorder, {
      note: `${cost.toFixed(2)}× the server CPU per round trip of the same server without a recorder (the median of per-round ratios); ${(recorder.rps / bobbin.rps).toFixed(2)}× its round trips/s`,
      targetSpec: {
        against: "absolute",
        max: Infinity,
        text: `≤ ${RECORDER_MAX}× CPU per round trip without a recorder`,
        extra: () => cost <= RECORDER_MAX,
      },
    }),
  );
  const store = result[STORE];
  results.add(
    echoRow(SCENARIO, "@bobbin/unix (libuv), a store per connection", store, {
      note: `${costOver(bobbin, store).toFixed(2)}× the server CPU per round trip of the same server without a store (the median of per-round ratios); ${(store.rps / bobbin.rps).toFixed(2)}× its round trips/s`,
    }),
  );
}

/** The Bobbin server whose connections' tasks each enter an AsyncLocalStorage store first: what a store costs a task's steps. */
const STORE = "bobbin-store";

/** The Bobbin server with `run`'s flightRecorder (a ring of 4,096 events): the recorder's cost on this row. */
const RECORDER = "bobbin:immediate:recorder";
const RECORDER_MAX = 1.05;

/**
 * What a server costs over the plain Bobbin server: the median of per-round
 * ratios of server CPU per round trip, each against the plain server measured
 * in the same round (a round slowed by other work moves one ratio, not the
 * verdict).
 */
function costOver(off, on) {
  return roundRatio(on, off, "cpuPerRt");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const modes = process.argv
    .find((a) => a.startsWith("--modes="))
    ?.slice(8)
    .split(",") ?? ["net", "bobbin"];
  console.log(`▶ ${SCENARIO}: ${ROUNDS} round(s) of ${WARMUP_S} s warm-up + ${SECONDS} s per server`);
  const result = await measureEcho({ modes });
  console.log(`\n${echoTable(result)}`);
  if (result.net && result.bobbin) {
    const ratio = result.bobbin.rps / result.net.rps;
    console.log(`\nTarget: libuv backend ≥ ${TARGET}× net round trips/s → ${ratio.toFixed(2)}× ${ratio >= TARGET ? "PASS" : "MISS"}`);
  }
}
