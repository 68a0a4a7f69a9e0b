// Shared harness: machine info, timing with warm-up + median, result rows,
// console table and Markdown output. No dependencies beyond Node itself.

import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

export const QUICK = process.argv.includes("--quick");
/** With `--samples`, scenarios whose contenders share rounds print every round's times side by side. */
export const SAMPLES = process.argv.includes("--samples");

/** Run the collector if node was started with --expose-gc (twice: weak refs, finalizers). */
export function gc() {
  if (typeof globalThis.gc === "function") {
    globalThis.gc();
    globalThis.gc();
  }
}

export function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus.length > 0 ? cpus[0].model.trim() : "unknown CPU",
    cores: cpus.length,
    node: process.version,
    v8: process.versions.v8,
    platform: `${process.platform}-${process.arch}`,
    memory: `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
  };
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * How `xs` compares with `ys`, two contenders' readings from the same rounds
 * (paired by index): the median of their per-round ratios. A round slowed by
 * load or a collection slows both of its readings and moves one ratio, where
 * the ratio of the two medians takes each from a different round.
 */
export function medianRatio(xs, ys) {
  return median(xs.map((x, i) => x / ys[i]));
}

/** Reject with a clear error if `promise` has not settled after `ms`. */
export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result after ${ms / 1000}s (hang?)`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Time `fn(n)` (sync or async; it does `n` operations and returns a checksum)
 * `warmup` times, then `iters` times, and report the median time per operation in ns.
 * `expect`, if given, is checked against every checksum so a broken contender
 * cannot post a fast number.
 */
export async function measure(fn, { n, warmup = 2, iters = 5, expect, timeoutMs = 60_000, label = "bench" }) {
  const samples = [];
  // One full collection before the contender, none between its runs: each run
  // starts with what the one before left, as in a program that runs for long.
  gc();
  for (let i = 0; i < warmup + iters; i++) {
    const t0 = performance.now();
    const r = await withTimeout(Promise.resolve(fn(n)), timeoutMs, label);
    const t1 = performance.now();
    if (expect !== undefined && r !== expect) {
      throw new Error(`${label}: wrong result ${String(r)} (expected ${String(expect)})`);
    }
    if (i >= warmup) samples.push(((t1 - t0) * 1e6) / n);
  }
  return { perOp: median(samples), samples };
}

/**
 * Warm-up rounds of the scenarios whose contenders share rounds: the third run of
 * spawn + await's Bobbin row still took 1.35–1.5× its later runs (the compiler was
 * still at work), so with 2 a measured round or two were still warming up.
 */
export const SHARED_WARMUP = 4;

/**
 * Times several contenders ({ contender, n, fn }) round by round: each runs
 * once per round, in an order that rotates, so that a burst of load from
 * another process falls on all of them rather than on one; after `warmup`
 * rounds, `rounds` are kept. With `collect`, a full `gc()` runs before every
 * run. Each run is timed twice: wall time, and the process's CPU time (all its
 * threads: on a loaded machine it counts what the run did, not how long it
 * waited for a core). `fn(n)` must return `expected(n)`; a contender that
 * fails or times out runs no more. Returns a Map: per contender, the median
 * per unit of `n` on `clock` ("wall" or "cpu") and its samples (and both
 * medians, `wall` and `cpu`), or the error that stopped it.
 */
export async function interleave(
  contenders,
  { warmup = 2, rounds = 7, collect = false, clock = "wall", expected = (n) => n, timeoutMs = 300_000, label = "" },
) {
  const live = contenders.filter((c) => c.fn && !c.error);
  const samples = new Map(live.map((c) => [c, { wall: [], cpu: [] }]));
  const failed = new Map();
  gc();
  for (let round = 0; round < warmup + rounds; round++) {
    for (let k = 0; k < live.length; k++) {
      const c = live[(round + k) % live.length];
      if (failed.has(c)) continue;
      if (collect) gc();
      try {
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        const answer = await withTimeout(Promise.resolve(c.fn(c.n)), timeoutMs, `${label} ${c.contender}`);
        const t1 = performance.now();
        const cpu = process.cpuUsage(cpu0);
        const want = expected(c.n);
        if (answer !== want) throw new Error(`wrong answer ${String(answer)} (expected ${String(want)})`);
        if (round < warmup) continue;
        samples.get(c).wall.push(((t1 - t0) * 1e6) / c.n);
        samples.get(c).cpu.push(((cpu.user + cpu.system) * 1e3) / c.n);
      } catch (e) {
        failed.set(c, errorMessage(e));
      }
    }
  }
  return new Map(
    contenders.map((c) => {
      const error = c.error ?? (c.fn ? failed.get(c) : "not available");
      if (error) return [c, { error }];
      const s = samples.get(c);
      return [c, { perOp: median(s[clock]), samples: s[clock], wall: median(s.wall), cpu: median(s.cpu) }];
    }),
  );
}

/**
 * Runs `node <args>` (a benchmark's child process) and resolves with the JSON
 * of the last line it printed; rejects with the last line of its stderr, or
 * says it was killed after `timeoutMs`.
 */
export function childJson(args, { timeoutMs = 120_000, env = process.env } = {}) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { timeout: timeoutMs, maxBuffer: 1 << 20, env }, (err, stdout, stderr) => {
      if (err) {
        const why = err.killed ? `killed after ${timeoutMs / 1000}s` : (stderr.trim().split("\n").filter(Boolean).pop() ?? err.message);
        reject(new Error(why));
        return;
      }
      try {
        resolve(JSON.parse(stdout.trim().split("\n").pop()));
      } catch {
        reject(new Error(`unreadable output from child: ${stdout.slice(0, 200)}`));
      }
    });
  });
}

/** An error's first message (for a row's `error`). */
export const errorMessage = (e) => (e?.message ? e.message : String(e));

/**
 * Measures a scenario's contenders and adds a row for each to `results`. A
 * contender is { contender, n, fn, anchor?, note?, targetSpec?, scenario?,
 * error?, iters?, apart? }; without `fn` (or with an `error`) its row says why.
 * By default `fn` is timed with `measure` (2 warm-up runs, `iters` measured
 * runs, 7 by default), one contender after another, and every checksum must
 * equal `expect(n)` (n by default); `check(c)` runs first if given.
 * `interleave: { iters, clock }` times the contenders together instead, round
 * by round (`interleave`, after `SHARED_WARMUP` rounds; those marked `apart`, too slow to share
 * rounds, still one after another), reporting `clock` time ("wall" or "cpu").
 * `measureOne(c)` (→ { perOp, samples }) replaces the timing, e.g. for memory
 * rows (`kind: "bytes"`).
 */
export async function runContenders(
  results,
  list,
  { scenario, kind = "time", expect = (n) => n, check, measureOne, interleave: shared } = {},
) {
  const together = shared ? list.filter((c) => c.fn && !c.error && !c.apart) : [];
  let measured = new Map();
  if (together.length !== 0) {
    try {
      if (check) for (const c of together) await check(c);
      measured = await interleave(together, {
        warmup: SHARED_WARMUP,
        rounds: shared.iters,
        clock: shared.clock,
        expected: expect,
        timeoutMs: 60_000,
        label: scenario,
      });
    } catch (e) {
      for (const c of together) measured.set(c, { error: errorMessage(e) });
    }
    if (SAMPLES) printRounds(together, measured, shared.clock ?? "wall");
  }
  for (const c of list) {
    const s = c.scenario ?? scenario;
    const row = { scenario: s, contender: c.contender, anchor: c.anchor, n: c.n, kind, targetSpec: c.targetSpec, note: c.note ?? "" };
    const timing = measured.get(c);
    if (timing !== undefined) {
      if (timing.error) results.add({ ...row, error: timing.error });
      else results.add({ ...row, perOp: timing.perOp, samples: timing.samples, wall: timing.wall, cpu: timing.cpu });
      continue;
    }
    if (c.error || (!measureOne && !c.fn)) {
      results.add({ ...row, error: c.error ?? "not available" });
      continue;
    }
    try {
      if (check) await check(c);
      const { perOp, samples } = measureOne
        ? await measureOne(c)
        : await measure(c.fn, { n: c.n, warmup: 2, iters: c.iters ?? 7, expect: expect(c.n), label: `${s} ${c.contender}` });
      results.add({ ...row, perOp, samples });
    } catch (e) {
      results.add({ ...row, error: errorMessage(e) });
    }
  }
  return results.rows;
}

/** Each measured round of contenders that shared rounds, one line per round (`--samples`). */
function printRounds(contenders, measured, clock) {
  const timed = contenders.filter((c) => measured.get(c)?.samples);
  if (timed.length === 0) return;
  console.log(`    per round, ${clock} time per unit: ${timed.map((c) => c.contender).join(" · ")}`);
  const rounds = Math.max(...timed.map((c) => measured.get(c).samples.length));
  for (let r = 0; r < rounds; r++) {
    const cells = timed.map((c) => fmtValue(measured.get(c).samples[r], "time"));
    console.log(`    ${String(r + 1).padStart(2)}: ${cells.join(" · ")}`);
  }
}

/** The rows of a scenario's `run(results)` alone, with ratios (for callers that do not use `Results`). */
export async function collectRows(run) {
  const results = new Results();
  await run(results);
  computeRatios(results.rows);
  return results.rows;
}

// ---------------------------------------------------------------- results

/**
 * A row of the final table.
 * kind: "time" (perOp in ns) or "bytes" (perOp in bytes).
 * target: optional { text, pass: boolean } for Bobbin rows.
 */
export class Results {
  constructor() {
    this.rows = [];
  }
  add(row) {
    this.rows.push({ vsAsync: null, vsFloor: null, target: null, note: "", ...row });
    const r = this.rows[this.rows.length - 1];
    let status = r.error ? `FAILED: ${r.error}` : fmtValue(r.perOp, r.kind);
    if (!r.error && r.samples && r.samples.length > 1) {
      status += `  [${r.samples.length} runs: ${fmtValue(Math.min(...r.samples), r.kind)} – ${fmtValue(Math.max(...r.samples), r.kind)}]`;
    }
    process.stdout.write(`  ${r.scenario} · ${r.contender}: ${status}${r.note ? `  (${r.note})` : ""}\n`);
    return r;
  }
}

export function fmtValue(v, kind) {
  if (v == null || Number.isNaN(v)) return "—";
  if (kind === "bytes") {
    if (v >= 10_240) return `${(v / 1024).toFixed(1)} KB`;
    return `${Math.round(v)} B`;
  }
  if (v >= 1e6) return `${(v / 1e6).toFixed(2)} ms`;
  if (v >= 1e4) return `${(v / 1e3).toFixed(1)} µs`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(2)} µs`;
  return `${v.toFixed(1)} ns`;
}

export function fmtRatio(r) {
  if (r == null || !Number.isFinite(r)) return "—";
  if (r >= 100) return `${r.toFixed(0)}×`;
  if (r >= 10) return `${r.toFixed(1)}×`;
  if (r >= 0.1) return `${r.toFixed(2)}×`;
  return `${r.toPrecision(2)}×`; // 0.0040×, not 0.00×
}

export function fmtN(n) {
  if (n == null) return "—";
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return String(n);
}

/**
 * Fill in ratios: against the async/await row and the raw generator row of
 * the same scenario (the table's columns), and against every anchor of the
 * scenario by name (`r.vs[anchor]`: a target may name another anchor, such
 * as the context switch's `yield*`+FIFO floor; the note says that ratio).
 */
export function computeRatios(rows) {
  for (const r of rows) {
    if (r.error || r.perOp == null) continue;
    const same = rows.filter((x) => x.scenario === r.scenario && !x.error && x.perOp != null);
    r.vs = {};
    for (const anchor of same) if (anchor.anchor) r.vs[anchor.anchor] = r.perOp / anchor.perOp;
    r.vsAsync = r.vs.async ?? null;
    r.vsFloor = r.vs.floor ?? null;
    if (r.targetSpec) {
      const { against, max, text, extra } = r.targetSpec;
      const value = against === "absolute" ? r.perOp : (r.vs[against] ?? null);
      const ok = value != null && value <= max && (extra ? extra(r) : true);
      r.target = { text, pass: ok };
      const also = r.targetSpec.alsoAgainst;
      if (also && r.vs[also.anchor] != null) r.note = `${r.note ? `${r.note}; ` : ""}${fmtRatio(r.vs[also.anchor])} ${also.name}`;
    }
  }
}

const HEADERS = ["Scenario", "Contender", "N", "time/op or bytes/fiber", "vs async/await", "vs raw generator", "Bobbin target", "result"];

function cells(r) {
  return [
    r.scenario,
    r.contender,
    fmtN(r.n),
    r.error ? "n/a" : fmtValue(r.perOp, r.kind),
    r.error ? "—" : fmtRatio(r.vsAsync),
    r.error ? "—" : fmtRatio(r.vsFloor),
    r.target ? r.target.text : r.targetSpec ? r.targetSpec.text : "",
    r.error ? "error" : r.target ? (r.target.pass ? "PASS" : "MISS") : "",
  ];
}

export function textTable(rows) {
  const data = rows.map(cells);
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...data.map((d) => d[i].length)));
  const line = (cs) => cs.map((c, i) => c.padEnd(widths[i])).join(" │ ");
  const sep = widths.map((w) => "─".repeat(w)).join("─┼─");
  const out = [line(HEADERS), sep];
  let last = null;
  for (let i = 0; i < data.length; i++) {
    if (last !== null && rows[i].scenario !== last) out.push(sep);
    last = rows[i].scenario;
    out.push(line(data[i]));
  }
  return out.join("\n");
}

function notesOf(rows) {
  const notes = [];
  for (const r of rows) {
    if (r.error) notes.push(`${r.scenario} · ${r.contender}: not measured — ${r.error}`);
    else if (r.note) notes.push(`${r.scenario} · ${r.contender}: ${r.note}`);
  }
  return notes;
}

export function textNotes(rows, extra = []) {
  const notes = [...notesOf(rows), ...extra];
  return notes.length ? `Notes:\n${notes.map((n) => `  - ${n}`).join("\n")}` : "";
}

export function markdown(rows, m, { started, seconds, extraNotes = [], title = "@bobbin/core benchmarks", command = "pnpm bench" }) {
  const esc = (s) => String(s).replace(/\|/g, "\\|");
  const out = [];
  out.push(`# ${title}`);
  out.push("");
  out.push(`Generated by \`${command}\` on ${started.toISOString()} (${seconds.toFixed(0)} s run).`);
  out.push("");
  out.push(`Machine: ${m.cpu}, ${m.cores} cores, ${m.memory} RAM, ${m.platform}, Node ${m.node} (V8 ${m.v8}).`);
  out.push("");
  out.push(`| ${HEADERS.join(" | ")} |`);
  out.push(`|${HEADERS.map((_, i) => (i >= 2 && i <= 5 ? "---:" : "---")).join("|")}|`);
  for (const r of rows) out.push(`| ${cells(r).map(esc).join(" | ")} |`);
  const notes = [...notesOf(rows), ...extraNotes];
  if (notes.length) {
    out.push("");
    out.push("Notes:");
    out.push("");
    for (const n of notes) out.push(`- ${esc(n)}`);
  }
  out.push("");
  return out.join("\n");
}

export function writeFile(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/**
 * What to import as Bobbin: `@bobbin/core`, or the file named by the
 * BOBBIN_CORE environment variable (to compare another build of core).
 */
export function bobbinSpecifier() {
  const alt = process.env.BOBBIN_CORE;
  return alt ? pathToFileURL(resolve(alt)).href : "@bobbin/core";
}

/** The low-level entry (`Trigger` and the other runtime-author names) of the core chosen by bobbinSpecifier. */
export function lowlevelSpecifier() {
  const alt = process.env.BOBBIN_CORE;
  return alt ? pathToFileURL(resolve(dirname(resolve(alt)), "lowlevel/index.js")).href : "@bobbin/core/lowlevel";
}

/** Load @bobbin/core (B) and its low-level entry (L), or explain why they cannot be loaded. */
export async function loadBobbin() {
  try {
    const B = await import(bobbinSpecifier());
    const L = await import(lowlevelSpecifier());
    const missing = [
      ...["run", "spawn", "awaitExn", "yieldNow"].filter((k) => B[k] === undefined),
      ...["Trigger"].filter((k) => L[k] === undefined).map((k) => `lowlevel.${k}`),
    ];
    if (missing.length) return { B: null, L: null, error: `@bobbin/core lacks ${missing.join(", ")}` };
    return { B, L, error: null };
  } catch (e) {
    const msg =
      e && e.code === "ERR_MODULE_NOT_FOUND"
        ? "@bobbin/core is not built (run `pnpm --filter @bobbin/core build`)"
        : `cannot import @bobbin/core: ${e?.message ? e.message.split("\n")[0] : e}`;
    return { B: null, L: null, error: msg };
  }
}
