// The soak: an echo server on each backend of @bobbin/unix under steady
// connection churn, its RSS printed as it goes. Too long for CI (5 minutes
// per backend by default); `pnpm soak --seconds=60` for a short run.
//
// The server is native-echo.js's (--serve libuv|native|uring: an accept loop
// and one fiber per connection doing read → write into a reused 4 KiB
// buffer), alone in its own process, without --expose-gc: its RSS is what
// the system sees, with no forced collection. The load comes from this
// process: 50 connections at a time, each of which connects, sends 1 B to
// 1 MiB (a pseudo-random size, from a pseudo-random offset of a fixed random
// 2 MiB), reads the echo back, checking every byte, and closes; another
// takes its place at once. Every --every seconds (default: a tenth of the
// run, at most 30 s) the server reports its RSS, JS heap and external memory.
// At the end: connections, bytes echoed, RSS after the first fifth of the run
// (warm), at the end and at its peak, how fast it grew over the second half,
// and the server's open fds once every client has gone (as many as before
// the load: no fd is leaked). A wrong byte, a lost byte or a failed
// connection stops the soak with an error.
//
//   node bench/src/soak.js [--seconds=300] [--every=S] [--conns=50] [--modes=libuv,native,uring] [--seed=N]

import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import net from "node:net";
import { arg, here, lines, stopServer } from "./echo-common.js";
import { uringHere } from "./native-echo.js";

const SECONDS = arg("seconds", 300);
const EVERY = arg("every", Math.min(30, SECONDS / 10));
const CONNS = arg("conns", 50);
const SEED = arg("seed", 1);
const MAX_SIZE = 1024 * 1024;
const MIB = 1024 * 1024;
const NAMES = { libuv: "libuv backend", native: "native backend (epoll)", uring: "io_uring backend" };

/** A small deterministic generator (xorshift32): sizes and offsets repeat from run to run. */
function xorshift(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** One connection: sends `expected`, reads it back (checking every byte), closes. Resolves once the server has closed too. */
function echoOnce(port, expected) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: "127.0.0.1" });
    let got = 0;
    sock.on("connect", () => sock.write(expected));
    sock.on("data", (d) => {
      if (got + d.length > expected.length || !d.equals(expected.subarray(got, got + d.length))) {
        sock.destroy();
        reject(new Error(`the echo of a ${expected.length}-byte message went wrong after byte ${got}`));
        return;
      }
      got += d.length;
      if (got === expected.length) sock.end();
    });
    sock.on("end", () => (got === expected.length ? resolve() : reject(new Error(`${got} of ${expected.length} bytes came back`))));
    sock.on("error", reject);
  });
}

/** The server's memory as it reports it (no collection forced): MiB. */
async function memOf(server, next) {
  server.stdin.write("mem\n");
  const [, rss, heap, external, count] = (await next("MEM", 60_000)).split(" ").map(Number);
  return { rss: rss / MIB, heap: heap / MIB, external: external / MIB, count };
}

const fdsOf = (pid) => readdirSync(`/proc/${pid}/fd`).length;

/** Soaks the server on `mode` for SECONDS; prints a line per sample; returns the summary. */
async function soak(mode, data, log) {
  const server = spawn(process.execPath, [here("./native-echo.js"), "--serve", mode], { stdio: ["pipe", "pipe", "inherit"] });
  const next = lines(server, `${mode} server`);
  try {
    const port = Number((await next("PORT")).split(" ")[1]);
    const fdsBefore = fdsOf(server.pid);
    const random = xorshift(SEED);
    let connections = 0;
    let echoed = 0;
    let running = true;
    const client = async () => {
      while (running) {
        const size = 1 + Math.floor(random() * MAX_SIZE);
        const at = Math.floor(random() * (data.length - size));
        await echoOnce(port, data.subarray(at, at + size));
        connections++;
        echoed += size;
      }
    };
    const clients = Array.from({ length: CONNS }, client);
    const failed = Promise.race(clients).then(
      () => {},
      (error) => error,
    );
    const samples = [];
    const t0 = Date.now();
    for (let t = EVERY; t <= SECONDS + 1e-9; t += EVERY) {
      const wait = t0 + t * 1000 - Date.now();
      const error = await Promise.race([failed, new Promise((r) => setTimeout(r, Math.max(0, wait)))]);
      if (error) throw error;
      const m = await memOf(server, next);
      samples.push({ t, connections, echoed, ...m });
      log(
        `  ${mode} ${t.toFixed(0).padStart(4)} s: ${connections.toLocaleString("en")} connections, ` +
          `${(echoed / 1e9).toFixed(1)} GB echoed, RSS ${m.rss.toFixed(1)} MiB (heap ${m.heap.toFixed(1)}, external ${m.external.toFixed(1)})`,
      );
    }
    running = false;
    await Promise.all(clients);
    const accepted = (await memOf(server, next)).count;
    // The server closes its side once it has read the client's end: give it a moment.
    let fdsAfter = fdsOf(server.pid);
    for (let i = 0; i < 50 && fdsAfter > fdsBefore; i++) {
      await new Promise((r) => setTimeout(r, 20));
      fdsAfter = fdsOf(server.pid);
    }
    return summary(samples, { connections, echoed, accepted, fdsBefore, fdsAfter });
  } finally {
    await stopServer(server);
  }
}

/** Warm and final RSS, peak, growth over the second half (MiB per minute). */
function summary(samples, totals) {
  const warmAt = samples.find((s) => s.t >= SECONDS / 5) ?? samples[0];
  const last = samples.at(-1);
  const half = samples.find((s) => s.t >= SECONDS / 2) ?? samples[0];
  const minutes = (last.t - half.t) / 60;
  return {
    ...totals,
    warm: warmAt.rss,
    warmAt: warmAt.t,
    end: last.rss,
    peak: Math.max(...samples.map((s) => s.rss)),
    perMinute: minutes > 0 ? (last.rss - half.rss) / minutes : 0,
  };
}

function table(results) {
  const rows = [
    "| backend | connections | echoed | RSS warm | RSS at the end | peak | growth, second half | server fds before → after |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const [mode, r] of Object.entries(results)) {
    rows.push(
      `| ${NAMES[mode]} | ${r.connections.toLocaleString("en")} | ${(r.echoed / 1e9).toFixed(1)} GB | ` +
        `${r.warm.toFixed(1)} MiB (${r.warmAt.toFixed(0)} s) | ${r.end.toFixed(1)} MiB | ${r.peak.toFixed(1)} MiB | ` +
        `${r.perMinute >= 0 ? "+" : ""}${r.perMinute.toFixed(2)} MiB/min | ${r.fdsBefore} → ${r.fdsAfter} |`,
    );
  }
  return rows.join("\n");
}

let modes = (process.argv.find((a) => a.startsWith("--modes="))?.slice(8) ?? "libuv,native,uring").split(",");
const uring = await uringHere();
if (!uring.available && modes.includes("uring")) {
  console.log(`io_uring left out: ${uring.reason}`);
  modes = modes.filter((m) => m !== "uring");
}
const data = Buffer.alloc(2 * MAX_SIZE);
const random = xorshift(SEED ^ 0x9e3779b9);
for (let i = 0; i < data.length; i++) data[i] = random() * 256;
console.log(`Soak: ${SECONDS} s per backend, ${CONNS} connections at a time, each echoing 1 B to 1 MiB; RSS every ${EVERY} s`);
const results = {};
for (const mode of modes) results[mode] = await soak(mode, data, console.log);
console.log(`\n${table(results)}`);
const leaks = Object.entries(results).filter(([, r]) => r.fdsAfter > r.fdsBefore || r.accepted !== r.connections);
for (const [mode, r] of leaks) {
  console.log(`${mode}: ${r.accepted} connections accepted for ${r.connections} made, ${r.fdsAfter - r.fdsBefore} fds left open`);
}
process.exitCode = leaks.length === 0 ? 0 : 1;
