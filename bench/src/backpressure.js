// Scenario — a fast writer to a slow reader: how much the writer's process
// grows while the reader holds it back, on every backend of @bobbin/unix.
//
// The writer (this file, --write <backend> <port> <bytes>) is a Bobbin
// program in its own process: it connects to the reader and writes 32 MiB
// (warm-up: more than the sockets' buffers hold, so the writer is already
// held back, and its code for that warm, before the window), then, after
// gc() and a reset of its peak RSS (/proc/self/clear_refs), <bytes> (96 MiB)
// in 16 KiB writes from one reused buffer (the largest write the native
// backend queues), and closes. It
// reports its peak RSS (VmHWM) minus its RSS at the reset, and the peaks of
// its JS heap (heapTotal) and of its ArrayBuffers over the same window
// (process.memoryUsage(), sampled every 10 ms). The reader is this process:
// a Node `net` socket paused and resumed to take 128 MiB/s, which checks
// every byte (each is a function of its position, so a lost, repeated or
// reordered run of any length shows) and the count.
//
// Rounds alternate the backends (7 rounds; 1 of 32 MiB with --quick);
// medians; under a minute. A window's growth varies by about ±0.5 MiB from
// round to round (the allocator's arenas, the young generation's pages), so
// one round decides nothing: compare medians. The project's target: the native backend grows no
// more than the libuv backend in the same run (io_uring is reported beside
// them). BOBBIN_BEFORE=<checkout> (built) adds that checkout's native backend
// to the same rounds, as "before".
//
//   node bench/src/backpressure.js [--quick] [--rounds=N] [--mib=N] [--modes=libuv,native,uring,before]

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { arg, beforeEnv, here, lines, loadNative, loadUnix } from "./echo-common.js";
import { median, QUICK } from "./harness.js";
import { uringHere } from "./native-echo.js";

export const SCENARIO = "fast writer → slow reader: writer's RSS growth";

const MIB = 1024 * 1024;
const MEASURED = arg("mib", QUICK ? 32 : 96) * MIB;
const WARMUP = 32 * MIB;
const WRITE = 16 * 1024;
const RATE = 128 * MIB;
const ROUNDS = arg("rounds", QUICK ? 1 : 7);
/** A writer that has not finished after this long has failed (the whole scenario must stay under a minute). */
const WRITER_MS = 30_000;
const NAMES = { libuv: "libuv backend", native: "native backend (epoll)", uring: "io_uring backend", before: "native backend, before" };
/** Another checkout (built), whose native backend is measured as "before" in the same rounds. */
const BEFORE = process.env.BOBBIN_BEFORE;

/** The byte at stream position `pos`. */
const byteAt = (pos) => (pos ^ (pos >>> 8) ^ (pos >>> 16) ^ (pos >>> 24)) & 255;

// ------------------------------------------------------------------ the writer's process

/** This process's RSS and peak RSS (VmRSS, VmHWM), in bytes. */
function rss() {
  const status = readFileSync("/proc/self/status", "utf8");
  const kib = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)[1]) * 1024;
  return { now: kib("VmRSS"), peak: kib("VmHWM") };
}

async function writer(backendName, port, measured) {
  const U = await loadUnix();
  const backend = backendName === "libuv" ? U.libuv : (await loadNative())[backendName === "uring" ? "uringBackend" : "nativeBackend"];
  let base = 0;
  let baseMem;
  let peakBuffers = 0;
  let peakHeap = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peakBuffers = Math.max(peakBuffers, m.arrayBuffers);
    peakHeap = Math.max(peakHeap, m.heapTotal);
  };
  await U.run(
    function* () {
      const sock = U.tcpv4();
      yield* U.connect(sock, { host: "127.0.0.1", port });
      const buf = Buffer.allocUnsafe(WRITE);
      const total = WARMUP + measured;
      let timer;
      for (let pos = 0; pos < total; pos += WRITE) {
        if (pos === WARMUP) {
          globalThis.gc();
          base = rss().now;
          writeFileSync("/proc/self/clear_refs", "5"); // VmHWM := VmRSS
          baseMem = process.memoryUsage();
          peakBuffers = baseMem.arrayBuffers;
          peakHeap = baseMem.heapTotal;
          timer = setInterval(sample, 10);
        }
        for (let i = 0; i < WRITE; i++) buf[i] = byteAt(pos + i);
        yield* U.write(sock, buf);
      }
      yield* U.close(sock);
      clearInterval(timer);
    },
    { backend },
  );
  sample();
  process.stdout.write(`GREW ${rss().peak - base} ${peakBuffers - baseMem.arrayBuffers} ${peakHeap - baseMem.heapTotal}\n`);
}

// ------------------------------------------------------------------ the reader (this process)

/** A loopback listener whose one connection is read at `RATE` and checked; `done` resolves with the byte count. */
async function slowReader(total) {
  const server = net.createServer();
  const done = new Promise((resolve, reject) => {
    server.once("connection", (sock) => {
      let pos = 0;
      let allowance = 0;
      const tick = setInterval(() => {
        allowance = Math.min(allowance + RATE / 100, RATE / 20);
        if (allowance > 0) sock.resume();
      }, 10);
      const fail = (error) => {
        clearInterval(tick);
        sock.destroy();
        reject(error);
      };
      sock.pause();
      sock.on("data", (d) => {
        for (let i = 0; i < d.length; i++) {
          if (d[i] !== byteAt(pos + i)) return fail(new Error(`byte ${pos + i} of the stream is wrong`));
        }
        pos += d.length;
        allowance -= d.length;
        if (allowance <= 0) sock.pause();
      });
      sock.on("end", () => {
        clearInterval(tick);
        if (pos === total) resolve(pos);
        else reject(new Error(`the reader got ${pos} bytes of ${total}`));
      });
      sock.on("error", fail);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: server.address().port, done, close: () => server.close() };
}

/** One writer on `mode` against a fresh reader: its growth in RSS and in ArrayBuffers, and the reader's byte count checked. */
async function round(mode) {
  const reader = await slowReader(WARMUP + MEASURED);
  const child = spawn(
    process.execPath,
    ["--expose-gc", here("./backpressure.js"), "--write", mode, String(reader.port), String(MEASURED)],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: mode === "before" ? beforeEnv(BEFORE) : process.env,
    },
  );
  try {
    const [, grew, buffers, heap] = (await lines(child, `writer on ${mode}`)("GREW", WRITER_MS)).split(" ").map(Number);
    await reader.done;
    return { grew, buffers, heap };
  } finally {
    child.kill();
    reader.close();
  }
}

/** A writer's growth, in words. */
const growth = (g) =>
  `RSS +${(g.grew / MIB).toFixed(1)} MiB (JS heap +${(g.heap / MIB).toFixed(1)} MiB, ArrayBuffers +${(g.buffers / MIB).toFixed(1)} MiB)`;

/** Alternating rounds of every mode (io_uring left out where it is unavailable); medians per mode. */
export async function measureBackpressure({ modes = ["libuv", "native", "uring", ...(BEFORE ? ["before"] : [])], log = console.log } = {}) {
  const uring = await uringHere();
  if (!uring.available && modes.includes("uring")) {
    log(`  io_uring row left out: ${uring.reason}`);
    modes = modes.filter((m) => m !== "uring");
  }
  const samples = Object.fromEntries(modes.map((m) => [m, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of modes) {
      const s = await round(mode);
      samples[mode].push(s);
      log(`  round ${r + 1}/${ROUNDS} · ${mode}: ${growth(s)}`);
    }
  }
  const out = {};
  for (const mode of modes) {
    const s = samples[mode];
    out[mode] = {
      grew: median(s.map((x) => x.grew)),
      buffers: median(s.map((x) => x.buffers)),
      heap: median(s.map((x) => x.heap)),
      samples: s,
    };
  }
  return out;
}

/** The result table, as Markdown. */
export function backpressureTable(result) {
  const base = result.libuv;
  const rows = ["| writer | RSS growth | vs libuv | JS heap growth | ArrayBuffers growth |", "|---|---:|---:|---:|---:|"];
  const mib = (n) => `${(n / MIB).toFixed(1)} MiB`;
  for (const [mode, r] of Object.entries(result)) {
    const vs = base ? `${(r.grew / base.grew).toFixed(2)}×` : "–";
    rows.push(`| ${NAMES[mode]} | ${mib(r.grew)} | ${vs} | ${mib(r.heap)} | ${mib(r.buffers)} |`);
  }
  return rows.join("\n");
}

// ------------------------------------------------------------------ bench/src/main.js

/** For bench/src/main.js: one row per backend (bytes: the writer's RSS growth), libuv the anchor. */
export async function run(results) {
  let result;
  try {
    result = await measureBackpressure({ log: (l) => process.stdout.write(`${l}\n`) });
  } catch (e) {
    results.add({ scenario: SCENARIO, contender: NAMES.native, kind: "bytes", n: MEASURED / MIB, error: e.message.split("\n")[0] });
    return;
  }
  for (const [mode, r] of Object.entries(result)) {
    results.add({
      scenario: SCENARIO,
      contender: NAMES[mode],
      kind: "bytes",
      n: MEASURED / MIB,
      perOp: r.grew,
      samples: r.samples.map((s) => s.grew),
      note: `${growth(r)} over ${MEASURED / MIB} MiB in 16 KiB writes to a reader taking 128 MiB/s; every byte checked`,
      // The target is the native backend's (its queued sends' copies were what grew); io_uring is reported.
      ...(mode === "libuv" ? { anchor: "async" } : {}),
      ...(mode === "native" ? { targetSpec: { against: "async", max: 1, text: "RSS growth ≤ 1.0× libuv's" } } : {}),
    });
  }
}

// ------------------------------------------------------------------ command line

const writeAt = process.argv.indexOf("--write");
if (writeAt >= 0) {
  const [backend, port, measured] = process.argv.slice(writeAt + 1);
  await writer(backend, Number(port), Number(measured));
} else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const modes = process.argv
    .find((a) => a.startsWith("--modes="))
    ?.slice(8)
    .split(",");
  console.log(`▶ ${SCENARIO}: ${ROUNDS} round(s) of ${MEASURED / MIB} MiB per backend`);
  const result = await measureBackpressure(modes ? { modes } : {});
  console.log(`\n${backpressureTable(result)}`);
}
