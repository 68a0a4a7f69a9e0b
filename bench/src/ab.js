// A/B of two builds of @bobbin/core on the kernel's rows: the context switch and spawn + await, each
// build beside the scenario's anchors, all in shared rounds in one process (see `interleave`), so
// that a change to the kernel is measured against what it replaces under the same load.
//
//   node --expose-gc bench/src/ab.js <before: a core dist/index.js> [<after>, default @bobbin/core] [--rounds=N] [--collect] [--recorder]
//
// `--collect` runs a full gc() before every run: what a change does to the runs that follow a full
// collection (in `pnpm bench`'s spawn + await a mark-compact falls inside about one round in six).
//
// `--recorder` adds spawn + await with a flight recorder of 4,096 events (recorder.js's row), each
// build's beside the "recorder off" row of the after build: what a change to the recorder costs.
//
// Keep a copy of a build to compare against first: `cp -r packages/core/dist /tmp/core-before`.

import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { computeRatios, fmtRatio, fmtValue, interleave, SHARED_WARMUP } from "./harness.js";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const roundsArg = process.argv.find((a) => a.startsWith("--rounds="));
const rounds = roundsArg ? Number(roundsArg.slice("--rounds=".length)) : 15;
const collect = process.argv.includes("--collect");
const recorder = process.argv.includes("--recorder");
if (args.length === 0) {
  console.error("usage: node --expose-gc bench/src/ab.js <before/index.js> [<after/index.js>] [--rounds=N] [--collect] [--recorder]");
  process.exit(2);
}
const load = (path) => import(path === "@bobbin/core" ? path : pathToFileURL(resolve(path)).href);
const builds = [
  ["before", await load(args[0])],
  ["after", await load(args[1] ?? "@bobbin/core")],
];

async function scenario(file, bobbinRow) {
  const url = new URL(file, import.meta.url).href;
  const mod = await import(url);
  // The anchors once, then Bobbin's row once per build, all in the same rounds. Each build's row
  // comes from an instance of the scenario's module of its own: rows made by one instance would
  // share its functions, whose call sites would then see both builds' objects (polymorphic, which
  // neither build's row is in `pnpm bench`), and the anchors' would not.
  const anchors = mod.contenders({ B: builds[1][1], bobbinError: null }).filter((c) => c.anchor && c.fn);
  const rows = [];
  for (const [name, B] of builds) {
    const own = await import(`${url}?build=${name}`);
    rows.push({ ...own.contenders({ B, bobbinError: null }).find((c) => c.contender === bobbinRow), contender: `Bobbin, ${name}` });
  }
  const list = [...anchors, ...rows];
  const expect = mod.expected ?? ((n) => n);
  const clock = mod.INTERLEAVE.clock;
  const timings = await interleave(list, {
    warmup: SHARED_WARMUP,
    rounds,
    collect,
    clock,
    expected: expect,
    timeoutMs: 60_000,
    label: mod.SCENARIO,
  });
  for (const [c, t] of timings) if (t.error) throw new Error(`${mod.SCENARIO} ${c.contender}: ${t.error}`);
  const table = list.map((c) => ({ scenario: mod.SCENARIO, contender: c.contender, anchor: c.anchor, perOp: timings.get(c).perOp }));
  computeRatios(table);
  console.log(`\n${mod.SCENARIO} (${clock} time, medians of ${rounds} rounds${collect ? ", a full gc() before each run" : ""})`);
  for (const r of table) {
    const vs = Object.entries(r.vs)
      .filter(([anchor]) => anchor !== r.anchor)
      .map(([anchor, x]) => `${fmtRatio(x)} ${anchor}`)
      .join(", ");
    console.log(`  ${r.contender.padEnd(30)} ${fmtValue(r.perOp, "time").padStart(9)}  ${vs}`);
  }
  const [before, after] = table.slice(-2);
  console.log(`  after / before: ${fmtRatio(after.perOp / before.perOp)}`);
}

// In `pnpm bench`'s order: the compiler's choices for the kernel depend on what ran before (after spawn
// + await, the step's compiled code holds the paths of a first step and of an end), so the switch is
// measured where `pnpm bench` measures it, after spawn + await, not in a fresh process.
await scenario("./spawn-await.js", "Bobbin");
await scenario("./switch.js", "Bobbin (yieldNow)");
if (recorder) await scenario("./recorder.js", "Bobbin, flightRecorder: 4096");
