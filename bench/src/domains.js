// Domains scenarios: parallel tasks on worker threads, against the anchors of their targets.
//
//   1. `call` round trip — a task that returns its argument, from dom0:
//      latency (sequential: await each call before the next) and throughput
//      (THROUGHPUT_N calls, at most IN_FLIGHT in flight), Bobbin `B.call(echo, i)`
//      with { domains: 1 } and { domains: 2 } side by side with piscina with
//      the same number of threads, a raw postMessage ping-pong and a
//      SharedArrayBuffer + Atomics ping-pong (the floor; domains-ping.js), their
//      rounds interleaved. Time per round trip; anchor: piscina.
//   2. CPU-bound `parallel` speedup — `B.parallel(spin, inputs)` over SPEEDUP_ITEMS items of
//      ~20 ms of CPU each, with { domains: 1 } and { domains: 2 }. Time per item;
//      anchor: the ideal (the domains: 1 time / 2, i.e. a 2.0× speedup).
//   3. Skewed `parallel` — inputs alternate heavy (~20 ms) and light (~0.2 ms),
//      so round-robin over 2 domains puts every heavy item on domain 1;
//      { workSharing: true } against { workSharing: false } (the anchor).
//
// Each Bobbin contender is one `B.run`: warm-up rounds (which start the workers
// and load the task module) and then the measured rounds all happen inside it,
// so a worker's start-up is never timed; piscina's pool is likewise created once
// and warmed up. Medians of the measured rounds.
//
// In these rows the harness's "vs async/await" column is against each scenario's
// anchor (piscina, the ideal, workSharing: false); a row note says so.
//
// Part of `pnpm bench` (main.js runs `run(results, ctx)`), and runnable alone:
//   node bench/src/domains.js [--quick]
// Either way the scenarios run in a child `node` process without `--expose-gc`
// (see `run` below for why).
// Uses `@bobbin/core` itself, not BOBBIN_CORE: the workers import the task
// module (domains-tasks.js), which must register its tasks with the core that
// runs them.

import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { AtomicsPingPong, PostPingPong, slidingWindow } from "./domains-ping.js";
import { collectRows, fmtRatio, fmtValue, gc, median, QUICK, textNotes, textTable, withTimeout } from "./harness.js";

export const SCENARIO = "domains (call, parallel speedup, skew)";

const LATENCY_N = QUICK ? 500 : 2_000; // sequential round trips per round
const THROUGHPUT_N = QUICK ? 2_000 : 10_000; // calls per round
const IN_FLIGHT = 64; // throughput: calls in flight at most
const CALL_WARMUP = 5; // rounds: the worker side of a call needs thousands of calls before V8 has optimized it
const CALL_ITERS = QUICK ? 3 : 11;

const HEAVY_MS = 20; // CPU cost of one heavy item (calibrated on dom0)
const LIGHT_DIV = 100; // a light item costs HEAVY_MS / LIGHT_DIV
const SPEEDUP_ITEMS = QUICK ? 8 : 16;
const SKEW_PAIRS = QUICK ? 4 : 8; // heavy/light pairs
const PAR_WARMUP = 1;
const PAR_ITERS = QUICK ? 3 : 5;

const TIMEOUT_MS = 60_000;
const SPEEDUP_TARGET = 1.8;
const PISCINA_ECHO = new URL("./piscina-echo.js", import.meta.url).href;
const RAW_WORKER = new URL("./domains-raw-worker.js", import.meta.url);

const ANCHOR_NOTE =
  'Domains rows: the "vs async/await" column is against each scenario\'s anchor — piscina (call), the ideal 2.0× (speedup), workSharing: false (skew); in the call rows "vs raw generator" is against the SharedArrayBuffer + Atomics ping-pong (the floor). ' +
  `time/op: call = per round trip (median of ${CALL_ITERS} rounds after ${CALL_WARMUP} warm-up rounds, the rounds of a scenario's contenders interleaved); parallel = per item, i.e. batch time / items (median of ${PAR_ITERS} batches after ${PAR_WARMUP} warm-up). Worker start-up is not timed; run in a child process without --expose-gc.`;

// ------------------------------------------------------------------ loading

async function load() {
  let B = null;
  let T = null;
  let bobbinError = null;
  try {
    B = await import("@bobbin/core");
    const missing = ["run", "call", "parallel", "defineTask", "awaitExn", "Domain"].filter((k) => B[k] === undefined);
    if (missing.length) bobbinError = `@bobbin/core lacks ${missing.join(", ")}`;
    else T = await import("./domains-tasks.js");
  } catch (e) {
    bobbinError =
      e && e.code === "ERR_MODULE_NOT_FOUND"
        ? "@bobbin/core is not built (run `pnpm --filter @bobbin/core build`)"
        : `cannot import @bobbin/core or the task module: ${e?.message ? e.message.split("\n")[0] : e}`;
  }
  if (bobbinError) B = T = null;
  let Piscina = null;
  let piscinaError = null;
  try {
    const mod = await import("piscina");
    Piscina = mod.Piscina ?? mod.default;
  } catch (e) {
    piscinaError =
      e && e.code === "ERR_MODULE_NOT_FOUND"
        ? "piscina is not installed (run `pnpm install`)"
        : `cannot import piscina: ${e?.message ? e.message.split("\n")[0] : e}`;
  }
  return { B, T, bobbinError, Piscina, piscinaError };
}

const message = (e) => (e?.message ? e.message : String(e));

// ------------------------------------------------------- 1. call round trip

const expectedSum = (n) => (n * (n - 1)) / 2;
const callsPerRound = (mode) => (mode === "latency" ? LATENCY_N : THROUGHPUT_N);
const windowOf = (mode) => (mode === "latency" ? 1 : IN_FLIGHT);

/** Bobbin: n calls, at most `window` in flight (a sliding window, awaited in order; 1: sequential). */
function* bobbinWindowed(B, T, n, window) {
  const ring = new Array(window);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const slot = i % window;
    if (i >= window) sum += yield* B.awaitExn(ring[slot]);
    ring[slot] = B.call(T.echo, i);
  }
  for (let i = Math.max(0, n - window); i < n; i++) sum += yield* B.awaitExn(ring[i % window]);
  return sum;
}

/**
 * One `B.run` with `domains` workers that measures a round each time
 * `round(n)` is called (its workers idle in between), until `close()`.
 */
async function bobbinCaller(B, T, domains, window) {
  let command = null; // resolves the run's wait for its next command
  let answer = null; // the round in progress: { resolve, reject }
  let next = new Promise((resolve) => {
    command = resolve;
  });
  function* main() {
    for (;;) {
      const n = yield* B.promise(() => next);
      if (n === null) return;
      next = new Promise((resolve) => {
        command = resolve;
      });
      answer.resolve(yield* bobbinWindowed(B, T, n, window));
    }
  }
  const done = B.run(main, { domains });
  done.catch((e) => answer?.reject(e));
  return {
    round: (n) =>
      new Promise((resolve, reject) => {
        answer = { resolve, reject };
        command(n);
      }),
    close: () => {
      command(null);
      return done;
    },
  };
}

/** piscina: `pool.run(i)` on a pool of `threads` threads, at most `window` in flight. */
function piscinaCaller(Piscina, threads, window) {
  const pool = new Piscina({ filename: PISCINA_ECHO, minThreads: threads, maxThreads: threads, idleTimeout: TIMEOUT_MS });
  return {
    round: (n) => slidingWindow(n, window, (i) => pool.run(i)),
    close: () => pool.destroy(),
  };
}

/**
 * Measures the contenders of one call scenario round by round, interleaved:
 * round r of every contender runs before round r + 1 of any, the order
 * rotating, so that a burst of load elsewhere on the machine falls on all of
 * them. Adds one row per contender: the median time per call, and in the
 * note the median CPU time of the whole process per call.
 */
async function interleavedCalls(results, scenario, n, contenders) {
  const live = [];
  for (const c of contenders) {
    const row = { scenario, contender: c.contender, anchor: c.anchor, n, kind: "time", targetSpec: c.targetSpec, note: c.note ?? "" };
    if (!c.start) {
      results.add({ ...row, error: c.error ?? "not available" });
      continue;
    }
    try {
      live.push({ row, caller: await withTimeout(c.start(), TIMEOUT_MS, `${scenario} ${c.contender}`), samples: [], cpu: [], error: null });
    } catch (e) {
      results.add({ ...row, error: message(e) });
    }
  }
  for (let round = 0; round < CALL_WARMUP + CALL_ITERS; round++) {
    for (let k = 0; k < live.length; k++) {
      const c = live[(round + k) % live.length];
      if (c.error) continue;
      gc();
      try {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        const sum = await withTimeout(c.caller.round(n), TIMEOUT_MS, `${scenario} ${c.row.contender}`);
        const t1 = performance.now();
        const cpu = process.cpuUsage(c0);
        if (sum !== expectedSum(n)) throw new Error(`wrong checksum ${sum} (expected ${expectedSum(n)})`);
        if (round >= CALL_WARMUP) {
          c.samples.push(((t1 - t0) * 1e6) / n);
          c.cpu.push(((cpu.user + cpu.system) * 1e3) / n);
        }
      } catch (e) {
        c.error = message(e);
      }
    }
  }
  for (const c of live) {
    try {
      await withTimeout(c.caller.close(), TIMEOUT_MS, `${scenario} ${c.row.contender} (closing)`);
    } catch (e) {
      c.error ??= message(e);
    }
    if (c.error) {
      results.add({ ...c.row, error: c.error });
      continue;
    }
    const cpu = `CPU ${fmtValue(median(c.cpu), "time")} per call (all threads)`;
    results.add({ ...c.row, perOp: median(c.samples), samples: c.samples, note: c.row.note ? `${cpu}; ${c.row.note}` : cpu });
  }
}

async function callScenarios(results, env) {
  const { B, T, bobbinError, Piscina, piscinaError } = env;
  let first = true;
  for (const mode of ["latency", "throughput"]) {
    for (const domains of [1, 2]) {
      const n = callsPerRound(mode);
      const window = windowOf(mode);
      const plural = domains === 1 ? "" : "s";
      const scenario = mode === "latency" ? `call latency, ${domains} domain${plural}` : `call throughput, ${domains} domain${plural}`;
      const how = mode === "latency" ? "sequential" : `${IN_FLIGHT} in flight`;
      await interleavedCalls(results, scenario, n, [
        {
          contender: `piscina 5 (${domains} thread${plural}, ${how})`,
          anchor: "async",
          note: first ? ANCHOR_NOTE : "",
          error: piscinaError,
          start: Piscina && (async () => piscinaCaller(Piscina, domains, window)),
        },
        {
          contender: `Bobbin call (domains: ${domains}, ${how})`,
          error: bobbinError,
          targetSpec: { against: "async", max: 1.0, text: "≤ piscina" },
          start: B && (() => bobbinCaller(B, T, domains, window)),
        },
        {
          contender: `raw postMessage ping-pong (${domains} thread${plural}, ${how})`,
          start: () => PostPingPong.start(domains, window),
        },
        {
          contender: `SharedArrayBuffer + Atomics ping-pong (${domains} thread${plural}, ${how}): floor`,
          anchor: "floor",
          start: () => AtomicsPingPong.start(domains, window),
        },
      ]);
      first = false;
    }
  }
}

// ------------------------------------------------- 2./3. CPU-bound parallel

/** Iterations of `spinLoop` that take about `ms` on this thread. */
function calibrate(spinLoop, ms) {
  for (let i = 0; i < 3; i++) spinLoop(1_000_000); // JIT
  const probe = 2_000_000;
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    spinLoop(probe);
    times.push(performance.now() - t0);
  }
  const msPerIteration = median(times) / probe;
  return Math.max(10_000, Math.round(ms / msPerIteration));
}

/**
 * Times (ms per batch) of the measured rounds of `B.parallel(task, inputs)`,
 * all in one run with `options`; each result is checked with `check(value, i)`.
 * Also returns the last round's results and the median CPU cores the process used.
 */
function bobbinParallel(B, task, inputs, check, options, label) {
  function* main() {
    const samples = [];
    const cores = [];
    let last = null;
    for (let round = 0; round < PAR_WARMUP + PAR_ITERS; round++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const rs = yield* B.parallel(task, inputs);
      const t1 = performance.now();
      const c = process.cpuUsage(c0);
      rs.forEach((r, i) => {
        if (!r.ok) throw new Error(`${label}: item ${i} failed: ${message(r.error)}`);
        check(r.value, i);
      });
      if (round >= PAR_WARMUP) {
        samples.push(t1 - t0);
        cores.push((c.user + c.system) / 1000 / (t1 - t0));
      }
      last = rs;
    }
    // CPU time of the whole process (every thread) per wall-clock time: about 2
    // when both workers had a core each; about 1 with domains: 2 means another
    // process held a core (the speedup then says nothing about Bobbin).
    return { samples, last, cores: median(cores) };
  }
  return withTimeout(B.run(main, options), TIMEOUT_MS, label);
}

/**
 * The machine check: the same batch on plain worker_threads (no Bobbin), items
 * dealt round-robin to `threads` workers, each running its share one by one.
 * Same return shape as `bobbinParallel`.
 */
async function rawParallel(inputs, threads, check, label) {
  const workers = Array.from({ length: threads }, () => new Worker(RAW_WORKER));
  const one = (w, n) =>
    new Promise((resolve, reject) => {
      const onError = (e) => {
        w.off("message", onMessage);
        reject(e);
      };
      const onMessage = (v) => {
        w.off("error", onError);
        resolve(v);
      };
      w.once("message", onMessage);
      w.once("error", onError);
      w.postMessage(n);
    });
  const batch = async () => {
    const out = new Array(inputs.length);
    await Promise.all(
      workers.map(async (w, j) => {
        for (let i = j; i < inputs.length; i += threads) out[i] = await one(w, inputs[i]);
      }),
    );
    return out;
  };
  try {
    const samples = [];
    const cores = [];
    for (let round = 0; round < PAR_WARMUP + PAR_ITERS; round++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const out = await withTimeout(batch(), TIMEOUT_MS, label);
      const t1 = performance.now();
      const c = process.cpuUsage(c0);
      for (let i = 0; i < out.length; i++) check(out[i], i);
      if (round >= PAR_WARMUP) {
        samples.push(t1 - t0);
        cores.push((c.user + c.system) / 1000 / (t1 - t0));
      }
    }
    return { samples, last: null, cores: median(cores) };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

const perItem = (msSamples, items) => msSamples.map((ms) => (ms * 1e6) / items);
const ms = (x) => `${x.toFixed(0)} ms`;

async function speedupScenario(results, { B, T, bobbinError }, heavy, heavyMs) {
  const items = SPEEDUP_ITEMS;
  const scenario = `CPU-bound parallel, ${items} × ~${HEAVY_MS} ms`;
  const row = (contender, extra) => ({ scenario, contender, n: items, kind: "time", note: "", ...extra });
  if (!B) {
    for (const d of [1, 2]) results.add(row(`Bobbin parallel (domains: ${d})`, { error: bobbinError }));
    return;
  }
  const inputs = new Array(items).fill(heavy);
  const expected = T.spinLoop(heavy);
  const check = (v, i) => {
    if (v !== expected) throw new Error(`item ${i}: wrong hash ${v} (expected ${expected})`);
  };
  const batch = {};
  for (const d of [1, 2]) {
    try {
      gc();
      batch[d] = await bobbinParallel(B, T.spin, inputs, check, { domains: d }, `${scenario} domains: ${d}`);
    } catch (e) {
      batch[d] = message(e);
    }
  }
  const ok1 = typeof batch[1] === "object";
  const ok2 = typeof batch[2] === "object";
  const t1 = ok1 ? median(batch[1].samples) : null;
  const t2 = ok2 ? median(batch[2].samples) : null;
  const cpu = (r) => `CPU ${r.cores.toFixed(2)} cores`;
  results.add(
    ok1
      ? row("Bobbin parallel (domains: 1)", {
          perOp: (t1 * 1e6) / items,
          samples: perItem(batch[1].samples, items),
          note: `${ms(t1)} per batch, ${cpu(batch[1])}; one item ≈ ${heavyMs.toFixed(1)} ms on dom0`,
        })
      : row("Bobbin parallel (domains: 1)", { error: batch[1] }),
  );
  if (ok1) {
    results.add(
      row("ideal 2.0× (domains: 1 time / 2)", { anchor: "async", perOp: (t1 * 1e6) / items / 2, note: `${ms(t1 / 2)} per batch` }),
    );
  }
  if (ok2) {
    const speedup = ok1 ? t1 / t2 : null;
    results.add(
      row("Bobbin parallel (domains: 2)", {
        perOp: (t2 * 1e6) / items,
        samples: perItem(batch[2].samples, items),
        target: { text: `≥ ${SPEEDUP_TARGET}× speedup`, pass: speedup !== null && speedup >= SPEEDUP_TARGET },
        note:
          `${ms(t2)} per batch, ${cpu(batch[2])}; speedup ${speedup === null ? "—" : fmtRatio(speedup)} over domains: 1 (ideal 2.00×); dom0 only waits` +
          (batch[2].cores < 1.5
            ? " — under 1.5 cores busy: another process held a core (see the load warning), or the work did not spread"
            : ""),
      }),
    );
  } else {
    results.add(row("Bobbin parallel (domains: 2)", { error: batch[2], target: { text: `≥ ${SPEEDUP_TARGET}× speedup`, pass: false } }));
  }
  // Machine check: what plain worker_threads get out of this machine right now.
  const raw = {};
  for (const threads of [1, 2]) {
    try {
      gc();
      raw[threads] = await rawParallel(inputs, threads, check, `${scenario} worker_threads ×${threads}`);
    } catch (e) {
      raw[threads] = message(e);
    }
  }
  for (const threads of [1, 2]) {
    const r = raw[threads];
    const contender = `machine check: plain worker_threads ×${threads}`;
    if (typeof r !== "object") {
      results.add(row(contender, { error: r }));
      continue;
    }
    const t = median(r.samples);
    let note = `${ms(t)} per batch, ${cpu(r)}`;
    if (threads === 2 && typeof raw[1] === "object")
      note += `; speedup ${fmtRatio(median(raw[1].samples) / t)} over 1 plain thread — what the machine gave in this run`;
    results.add(row(contender, { perOp: (t * 1e6) / items, samples: perItem(r.samples, items), note }));
  }
}

async function skewScenario(results, { B, T, bobbinError }, heavy) {
  const light = Math.max(1, Math.round(heavy / LIGHT_DIV));
  const items = 2 * SKEW_PAIRS;
  const scenario = `skewed parallel, ${SKEW_PAIRS} heavy + ${SKEW_PAIRS} light, 2 domains`;
  const row = (contender, extra) => ({ scenario, contender, n: items, kind: "time", note: "", ...extra });
  const names = { false: "Bobbin parallel (workSharing: false)", true: "Bobbin parallel (workSharing: true)" };
  if (!B) {
    for (const s of [false, true]) results.add(row(names[s], { error: bobbinError }));
    return;
  }
  // heavy, light, heavy, light…: round-robin over domains [1, 2] puts every heavy item on domain 1.
  const inputs = Array.from({ length: items }, (_, i) => (i % 2 === 0 ? heavy : light));
  const expected = { [heavy]: T.spinLoop(heavy), [light]: T.spinLoop(light) };
  const check = (v, i) => {
    if (!Array.isArray(v) || v[0] !== expected[inputs[i]]) throw new Error(`item ${i}: wrong result ${JSON.stringify(v)}`);
  };
  const out = {};
  for (const sharing of [false, true]) {
    try {
      gc();
      out[sharing] = await bobbinParallel(
        B,
        T.spinWhere,
        inputs,
        check,
        { domains: 2, workSharing: sharing },
        `${scenario} ${names[sharing]}`,
      );
    } catch (e) {
      out[sharing] = message(e);
    }
  }
  // Where the heavy items ran in the last round (a check that the skew is real without sharing).
  const placement = (rs) => {
    const onDomain = {};
    rs.forEach((r, i) => {
      if (inputs[i] === heavy) onDomain[r.value[1]] = (onDomain[r.value[1]] ?? 0) + 1;
    });
    return Object.entries(onDomain)
      .map(([d, k]) => `${k} on domain ${d}`)
      .join(", ");
  };
  const base = typeof out[false] === "object" ? median(out[false].samples) : null;
  // Without sharing, domain 1 runs every heavy item: the batch takes about
  // SKEW_PAIRS heavy items. Split evenly, each domain would run half of all the work.
  const idealRatio = (1 + 1 / LIGHT_DIV) / 2;
  for (const sharing of [false, true]) {
    const r = out[sharing];
    if (typeof r !== "object") {
      results.add(row(names[sharing], { error: r }));
      continue;
    }
    const t = median(r.samples);
    let note = `${ms(t)} per batch, CPU ${r.cores.toFixed(2)} cores; heavy items (last round): ${placement(r.last)}`;
    if (sharing) {
      note += `; ideal (work split evenly) ${fmtRatio(idealRatio)} of no sharing`;
      if (base !== null) note += ` ≈ ${ms(idealRatio * base)}`;
    }
    results.add(
      row(names[sharing], { anchor: sharing ? undefined : "async", perOp: (t * 1e6) / items, samples: perItem(r.samples, items), note }),
    );
  }
}

// ---------------------------------------------------------------------- run

/** Every domains scenario, adding rows to `results` (in the child process). */
async function runScenarios(results) {
  const t0 = performance.now();
  const env = await load();
  if (env.bobbinError) console.log(`  Bobbin: ${env.bobbinError} — its rows will be empty`);
  if (env.piscinaError) console.log(`  piscina: ${env.piscinaError} — its rows will be empty`);
  await callScenarios(results, env);
  let heavy = 0;
  let heavyMs = 0;
  if (env.T) {
    heavy = calibrate(env.T.spinLoop, HEAVY_MS);
    const times = [];
    for (let i = 0; i < 3; i++) {
      const c0 = performance.now();
      env.T.spinLoop(heavy);
      times.push(performance.now() - c0);
    }
    heavyMs = median(times);
  }
  await speedupScenario(results, env, heavy, heavyMs);
  await skewScenario(results, env, heavy);
  console.log(`  (domains section: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}

const SELF = fileURLToPath(import.meta.url);
const ROW = "ROW ";
const CHILD_TIMEOUT_MS = 5 * 60_000;

/**
 * Runs the scenarios in a child `node` process (plain, no `--expose-gc`) and
 * adds its rows to `results` as they arrive. A child because @bobbin/core gives
 * its workers the parent's execArgv, and Node refuses V8 flags such as
 * `--expose-gc` (which `pnpm bench` uses) in a Worker's execArgv
 * (ERR_WORKER_INVALID_EXEC_ARGV); it also keeps the other scenarios' heaps and
 * JIT state out of these numbers.
 */
export async function run(results, _ctx = {}) {
  const args = [SELF, "--child", ...(QUICK ? ["--quick"] : [])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
  let added = 0;
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    if (line.startsWith(ROW)) {
      results.add(JSON.parse(line.slice(ROW.length)));
      added++;
    } else console.log(line);
  });
  const [code, signal] = await new Promise((resolve) => child.once("close", (c, s) => resolve([c, s])));
  clearTimeout(timer);
  if (code !== 0) {
    const why = signal
      ? `killed by ${signal}${signal === "SIGKILL" ? ` (no end after ${CHILD_TIMEOUT_MS / 1000} s?)` : ""}`
      : `exit code ${code}`;
    results.add({
      scenario: "domains",
      contender: "(child process)",
      kind: "time",
      error: `the domains child process failed (${why}) after ${added} rows`,
    });
  }
  return results.rows;
}

/** The domains rows alone (for callers that do not use the harness's `Results`). */
export const rows = () => collectRows(run);

// --- child: node bench/src/domains.js --child [--quick] ----------------------
if (process.argv[2] === "--child") {
  const out = { add: (row) => process.stdout.write(`${ROW + JSON.stringify(row)}\n`) };
  runScenarios(out).catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
} else if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // --- standalone: node bench/src/domains.js [--quick] -----------------------
  console.log(`▶ ${SCENARIO}`);
  const all = await rows();
  console.log(`\n${textTable(all)}`);
  const notes = textNotes(all);
  if (notes) console.log(`\n${notes}`);
}
