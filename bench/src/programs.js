// Whole programs: the same three programs written the way each system writes
// them — a fan-out/fan-in pipeline over bounded channels, scatter-gather with
// cancellation, and deep call chains (see src/programs/*.js) — in Bobbin,
// async/await (with p-limit where a limit is wanted), Effection 4, Effect 3
// and Effect 4. Every program's answer is checked on every run.
//
// The contenders of a program run in interleaved rounds (round r of each
// before round r + 1 of any, the order rotating), so a burst of load from
// elsewhere falls on all of them; twice: with no forced GC between runs, and
// with a full `gc()` before every run (a program that starts from a collected
// heap: young-generation sizing reset, and whatever V8 throws away then).
// Ratios are against async/await in the same rounds.
//
// BOBBIN_BEFORE=<checkout> adds rows for the Bobbin of another checkout (built),
// interleaved with the others: a before/after in one run.
//
//   node --expose-gc bench/src/programs.js [--quick] [--program=pipeline,scatter,chains]
//     [--rounds=N] [--contenders=async,bobbin]   (contenders: names start with these, case-insensitive)

import os from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { collectRows, fmtRatio, interleave, machine, markdown, QUICK, textNotes, textTable, writeFile } from "./harness.js";
import * as chains from "./programs/chains.js";
import { commitOf, loadBobbin } from "./programs/common.js";
import * as pipeline from "./programs/pipeline.js";
import * as scatter from "./programs/scatter.js";

export const SCENARIO = "whole programs";
const PROGRAMS = { pipeline, scatter, chains };
const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const WARMUP = 2;
const ROUNDS = Number(arg("rounds") ?? (QUICK ? 3 : 7));
const SCALE = QUICK ? 0.2 : 1;

/**
 * The slow contenders run a fraction of N, so that a round takes seconds, not
 * minutes: the time per item, request or task is what is compared, and theirs
 * measured flat within the noise from 5 % to 40 % of N.
 */
const FRACTION = {
  scatter: { "Effection 4": 0.1, "Effect 3": 0.2, "Effect 4": 0.5 },
  chains: { "Effection 4": 0.1, "Effect 3": 0.1, "Effect 4": 0.2 },
};

const TARGET = { against: "async", max: 1 / 1.5, text: "≥ 1.5× faster than async/await" };

function fractionOf(program, contender) {
  const table = FRACTION[program] ?? {};
  for (const [prefix, f] of Object.entries(table)) if (contender.startsWith(prefix)) return f;
  return 1;
}

/** The contenders of `program` (this Bobbin, and the before one if given), each with its N. */
function contendersOf(key, mod, bobbins) {
  const list = [...mod.contenders()];
  for (const b of bobbins) {
    // Another checkout's Bobbin runs the program's main way only.
    for (const way of b.before ? mod.bobbin.slice(0, 1) : mod.bobbin) {
      list.push({
        contender: b.before ? `${way.contender}, before: ${b.label}` : way.contender,
        fn: b.B ? way.make(b.B, b.S) : null,
        error: b.error,
        target: !b.before && !way.reference,
      });
    }
  }
  const wanted = arg("contenders")?.toLowerCase().split(",");
  return list
    .filter((c) => !wanted || c.anchor || wanted.some((w) => c.contender.toLowerCase().startsWith(w)))
    .map((c) => {
      const f = fractionOf(key, c.contender) * SCALE;
      return { ...c, n: Math.max(100, Math.round(mod.N * f)), reduced: f < SCALE };
    });
}

async function runProgram(results, key, mod, bobbins) {
  const cs = contendersOf(key, mod, bobbins);
  for (const collect of [false, true]) {
    const scenario = `${mod.NAME}${collect ? ", full GC before each run" : ", no GC between runs"}`;
    console.log(`  ${scenario}: ${ROUNDS} interleaved rounds after ${WARMUP} warm-up rounds`);
    if (collect && typeof globalThis.gc !== "function") {
      for (const c of cs)
        results.add({ scenario, contender: c.contender, anchor: c.anchor, n: c.n, kind: "time", error: "needs node --expose-gc" });
      continue;
    }
    const measured = await interleave(cs, { warmup: WARMUP, rounds: ROUNDS, collect, expected: mod.expected, label: mod.NAME });
    for (const c of cs) {
      const row = {
        scenario,
        contender: c.contender,
        anchor: c.anchor,
        n: c.n,
        kind: "time",
        targetSpec: c.target ? TARGET : undefined,
      };
      const note = c.reduced ? `smaller N: the time per ${mod.UNIT} is what is compared` : "";
      results.add({ ...row, ...measured.get(c), note });
    }
  }
}

/** Runs the programs and adds their rows to `results`. */
export async function run(results) {
  const bobbins = [{ ...(await loadBobbin()), before: false }];
  const root = process.env.BOBBIN_BEFORE;
  if (root) bobbins.push({ ...(await loadBobbin(root)), before: true, label: commitOf(root) });
  for (const b of bobbins) if (b.error) console.log(`  Bobbin: ${b.error} — its rows will be empty`);
  const wanted = arg("program")?.split(",");
  for (const [key, mod] of Object.entries(PROGRAMS)) {
    if (wanted && !wanted.includes(key)) continue;
    await runProgram(results, key, mod, bobbins);
  }
}

/** One line per Bobbin row: how many times faster (or slower) than async/await it ran. */
export function summary(rows) {
  return rows
    .filter((r) => r.contender.startsWith("Bobbin") && r.vsAsync != null)
    .map(
      (r) =>
        `${r.scenario} · ${r.contender}: ${r.vsAsync <= 1 ? `${fmtRatio(1 / r.vsAsync)} faster` : `${fmtRatio(r.vsAsync)} slower`} than async/await`,
    );
}

// --- standalone: node --expose-gc bench/src/programs.js [--quick] ------------------
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = new Date();
  const t0 = performance.now();
  const m = machine();
  const load = os.loadavg()[0];
  console.log(`Machine: ${m.cpu} · ${m.cores} cores · Node ${m.node} (V8 ${m.v8}) · load average ${load.toFixed(1)}`);
  if (typeof globalThis.gc !== "function") console.log("warning: run with `node --expose-gc` (the GC rows need it)");
  console.log(`▶ ${SCENARIO}`);
  const all = await collectRows(run);
  const seconds = (performance.now() - t0) / 1000;
  const loadEnd = os.loadavg()[0];
  const extraNotes = [
    `load average ${load.toFixed(1)} at the start and ${loadEnd.toFixed(1)} at the end on ${m.cores} cores`,
    `medians of ${ROUNDS} interleaved rounds after ${WARMUP} warm-up rounds; lower ratios are better`,
  ];
  console.log(`\n${textTable(all)}`);
  console.log(`\n${textNotes(all, extraNotes)}`);
  console.log(`\n${summary(all).join("\n")}`);
  console.log(`\nTotal: ${seconds.toFixed(0)} s`);
  if (!QUICK && !arg("program") && !arg("contenders") && !arg("rounds")) {
    const out = fileURLToPath(new URL("../results/programs.md", import.meta.url));
    writeFile(
      out,
      markdown(all, m, {
        started,
        seconds,
        extraNotes,
        title: "Whole programs",
        command: `${process.env.BOBBIN_BEFORE ? "BOBBIN_BEFORE=<a checkout of main> " : ""}node --expose-gc bench/src/programs.js`,
      }),
    );
    console.log(`Markdown written to ${out}`);
  }
}
