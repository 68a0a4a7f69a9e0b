// `pnpm bench`: every scenario, every contender, one process run (memory rows in
// child processes), one table. Also written as Markdown to bench/results/core.md.
//
//   node --expose-gc src/main.js [--quick] [--only=spawn,switch,recursion,memory,million,record,group,channels,recorder,yieldifdue,async-context,traces,domains,sync,chanops,programs,echo,native,backpressure,http,sim]

import os from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import * as asyncContext from "./async-context.js";
import * as backpressure from "./backpressure.js";
import * as channelOps from "./channel-ops.js";
import * as channels from "./channels.js";
import * as domains from "./domains.js";
import * as echo from "./echo.js";
import * as groupCancel from "./group-cancel.js";
import { computeRatios, loadBobbin, machine, markdown, QUICK, Results, textNotes, textTable, writeFile } from "./harness.js";
import * as http from "./http.js";
import * as memory from "./memory.js";
import * as million from "./million.js";
import * as nativeEcho from "./native-echo.js";
import * as programs from "./programs.js";
import * as recorder from "./recorder.js";
import * as recursion from "./recursion.js";
import * as sim from "./sim.js";
import * as spawnAwait from "./spawn-await.js";
import * as contextSwitch from "./switch.js";
import * as sync from "./sync.js";
import * as taskRecord from "./task-record.js";
import * as traces from "./traces.js";
import * as yieldIfDue from "./yield-if-due.js";

const SCENARIOS = [
  ["spawn", spawnAwait],
  ["switch", contextSwitch],
  ["recursion", recursion],
  ["memory", memory],
  ["million", million],
  ["record", taskRecord],
  ["group", groupCancel],
  ["channels", channels],
  ["recorder", recorder],
  ["yieldifdue", yieldIfDue],
  ["async-context", asyncContext],
  ["traces", traces],
  ["domains", domains],
  ["sync", sync],
  ["chanops", channelOps],
  ["programs", programs],
  ["echo", echo],
  ["native", nativeEcho],
  ["backpressure", backpressure],
  ["http", http],
  ["sim", sim],
];

const onlyArg = process.argv.find((a) => a.startsWith("--only="));
const only = onlyArg ? new Set(onlyArg.slice("--only=".length).split(",")) : null;

const started = new Date();
const t0 = performance.now();
const m = machine();
console.log(`Machine: ${m.cpu} · ${m.cores} cores · ${m.memory} RAM · ${m.platform} · Node ${m.node} (V8 ${m.v8})`);
const load = os.loadavg()[0];
if (load > m.cores * 0.5)
  console.log(`warning: load average ${load.toFixed(1)} on ${m.cores} cores — other work is running, numbers will be noisy`);
if (typeof globalThis.gc !== "function") console.log("warning: run with `node --expose-gc` for stable numbers (memory rows need it)");
if (QUICK) console.log("--quick: smaller N everywhere; numbers are indicative only");

const { B, L, error: bobbinError } = await loadBobbin();
console.log(
  bobbinError
    ? `Bobbin: ${bobbinError} — Bobbin rows will be empty`
    : `Bobbin: ${process.env.BOBBIN_CORE ? process.env.BOBBIN_CORE : "@bobbin/core"} loaded`,
);

const results = new Results();
for (const [key, mod] of SCENARIOS) {
  if (only && !only.has(key)) continue;
  console.log(`\n▶ ${mod.SCENARIO}`);
  await mod.run(results, { B, L, bobbinError });
}

computeRatios(results.rows);
const seconds = (performance.now() - t0) / 1000;
const loadEnd = os.loadavg()[0];
const extraNotes = [
  ...(Math.max(load, loadEnd) > m.cores * 0.5
    ? [
        `load average was ${load.toFixed(1)} at the start and ${loadEnd.toFixed(1)} at the end on ${m.cores} cores: other work shared the CPU, so times are noisier than usual`,
      ]
    : []),
  "time/op: spawn+await = per child (CPU time); context switch = per switch (CPU time); depth-100 recursion = per depth-100 chain (100 spawns + awaits; N counts chains). spawn+await and context switch: the anchors and Bobbin in interleaved rounds (21 and 15 after 4 warm-up rounds), the others apart; elsewhere medians of 7 runs after 2 warm-up runs (Effection spawn+await: 3 runs), gc() before each contender but not between its runs. Lower ratios are better.",
  "suspended fiber memory: heapUsed after gc() with all fibers parked, minus before, divided by N; each contender in its own `node --expose-gc` process; includes the parent's array slots for the wake-up handle and the task (16 B/fiber; 8 B for the raw generator).",
  "1M fibers: the same programs, all contenders in one child process, 7 interleaved rounds each after a full GC; bytes as in suspended fiber memory; times per fiber, in wall time: from the first start until all are parked, the waking calls, then until every one has ended and its result was collected.",
];

console.log(`\n${textTable(results.rows)}`);
const notes = textNotes(results.rows, extraNotes);
if (notes) console.log(`\n${notes}`);
console.log(`\nTotal: ${seconds.toFixed(0)} s`);

if (!only && !QUICK) {
  const out = fileURLToPath(new URL("../results/core.md", import.meta.url));
  writeFile(out, markdown(results.rows, m, { started, seconds, extraNotes }));
  console.log(`Markdown written to ${out}`);
} else {
  console.log("(partial or --quick run: results/core.md not written)");
}
