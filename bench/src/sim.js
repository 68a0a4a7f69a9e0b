// @bobbin/sim: how fast a simulated world runs (the project's target: ≥ 100,000 simulated
// round trips/s). Both rows run the examples' simulated echo world
// (packages/examples/src/sim/echo.ts: chapter 8's echo server, its code
// unchanged, on a simulated host; clients on other hosts checking every byte):
//
//   1. round trips — 50 clients, 64-byte messages, no pause between them, no
//      faults: wall time per simulated round trip (every byte checked); its
//      anchor, measured in the same run, is the same exchange in plain
//      async/await with no network at all (50 clients and 50 echoers passing
//      64-byte copies through Promise mailboxes, every byte checked), so the
//      ratio says what the simulated world costs over bare message passing.
//   2. virtual time (a scenario of its own: no anchor) — 20 clients pausing 0.1 s (virtual) between messages,
//      under partitions, resets and crashes: wall time per simulated second.
//
// Part of `pnpm bench` (main.js runs `run(results)`), and runnable alone:
//   node bench/src/sim.js [--quick]
// `@bobbin/sim` and `@bobbin/examples` must be built (`pnpm bench` builds them).

import { pathToFileURL } from "node:url";
import { collectRows, errorMessage, measure, median, QUICK, textNotes, textTable } from "./harness.js";

export const SCENARIO = "simulated world";
/** Row 2 stands apart: its unit (wall time per simulated second) has no anchor. */
const VIRTUAL_SCENARIO = "simulated world, virtual time";
const CLIENTS = 50;
const SESSIONS = 4;
const MESSAGES = QUICK ? 100 : 500; // per session: 50 × 4 × 500 = 100,000 round trips
const TARGET = 100_000;
const SLOW_CLIENTS = 20;
const SLOW_MESSAGES = QUICK ? 10 : 40;

async function loadSim() {
  try {
    const { Sim } = await import("@bobbin/sim");
    const { echoWorld } = await import("@bobbin/examples/dist/sim/echo.js");
    return { Sim, echoWorld, error: null };
  } catch (e) {
    const msg =
      e && e.code === "ERR_MODULE_NOT_FOUND"
        ? "@bobbin/sim or @bobbin/examples is not built (run `pnpm turbo run build --filter=@bobbin/bench...`)"
        : `cannot load the simulated echo world: ${errorMessage(e).split("\n")[0]}`;
    return { Sim: null, echoWorld: null, error: msg };
  }
}

/** Runs one world; returns the round trips whose bytes were all checked, and the virtual seconds it took. */
async function runWorld(Sim, echoWorld, seed, options) {
  const sim = new Sim({ seed });
  const world = echoWorld(sim, options);
  await sim.run();
  let roundTrips = 0;
  for (const report of world.clients.values()) roundTrips += report.roundTrips;
  return { roundTrips, virtual: sim.now() };
}

/** A one-slot mailbox between two async functions. */
class Mailbox {
  #value = null;
  #taker = null;
  put(value) {
    const taker = this.#taker;
    if (taker === null) this.#value = value;
    else {
      this.#taker = null;
      taker(value);
    }
  }
  take() {
    const value = this.#value;
    if (value !== null) {
      this.#value = null;
      return Promise.resolve(value);
    }
    return new Promise((resolve) => {
      this.#taker = resolve;
    });
  }
}

/** The anchor of row 1: `n` round trips of 64-byte copies between async clients and echoers; returns those checked. */
async function plainExchange(n) {
  const perClient = n / CLIENTS;
  const client = async (id) => {
    const out = new Mailbox();
    const back = new Mailbox();
    const echo = (async () => {
      for (let i = 0; i < perClient; i++) back.put((await out.take()).slice());
    })();
    let checked = 0;
    const message = new Uint8Array(64);
    for (let i = 0; i < perClient; i++) {
      message.fill((id + i) & 0xff);
      out.put(message.slice());
      const reply = await back.take();
      if (reply.length === 64 && reply.every((b) => b === ((id + i) & 0xff))) checked++;
    }
    await echo;
    return checked;
  };
  const counts = await Promise.all(Array.from({ length: CLIENTS }, (_, id) => client(id)));
  return counts.reduce((a, b) => a + b, 0);
}

/** Row 1's anchor, measured like it. */
async function plainRoundTrips(results) {
  const n = CLIENTS * SESSIONS * MESSAGES;
  const { perOp, samples } = await measure(plainExchange, { n, iters: 5, expect: n, label: `${SCENARIO} anchor` });
  results.add({
    scenario: SCENARIO,
    contender: `async/await: ${CLIENTS} clients × 64 B through Promise mailboxes (no network)`,
    anchor: "async",
    kind: "time",
    n,
    perOp,
    samples,
    note: `${Math.round(1e9 / perOp).toLocaleString("en")} round trips/s`,
  });
}

/** Row 1: wall time per simulated round trip (every byte checked), median of 5 runs after 2 warm-up runs. */
async function roundTrips(results, Sim, echoWorld) {
  const options = { clients: CLIENTS, sessions: SESSIONS, messages: MESSAGES, chaos: false };
  const n = CLIENTS * SESSIONS * MESSAGES;
  let seed = 0;
  const cpu0 = process.cpuUsage();
  const { perOp, samples } = await measure(async () => (await runWorld(Sim, echoWorld, ++seed, options)).roundTrips, {
    n,
    iters: 5,
    expect: n,
    label: `${SCENARIO} round trips`,
  });
  const cpu = process.cpuUsage(cpu0);
  const perCpuSecond = (seed * n) / ((cpu.user + cpu.system) / 1e6);
  const perSecond = 1e9 / perOp;
  results.add({
    scenario: SCENARIO,
    contender: `@bobbin/sim: ${CLIENTS} clients × 64 B round trips, no faults`,
    kind: "time",
    n,
    perOp,
    samples,
    note:
      `${Math.round(perSecond).toLocaleString("en")} simulated round trips/s (wall clock; every echoed byte checked); ` +
      `${Math.round(perCpuSecond).toLocaleString("en")} per second of this process's CPU time (all runs: less sensitive to other work on the machine)`,
    targetSpec: { against: "absolute", max: 1e9 / TARGET, text: `≥ ${TARGET.toLocaleString("en")} simulated round trips/s` },
  });
}

/** Row 2: wall time per simulated second of a world under faults, median of 5 runs after 1 warm-up run. */
async function virtualTime(results, Sim, echoWorld) {
  const options = { clients: SLOW_CLIENTS, sessions: 2, messages: SLOW_MESSAGES, think: 0.1 };
  const samples = [];
  for (let i = 0; i < 6; i++) {
    const t0 = performance.now();
    const r = await runWorld(Sim, echoWorld, 1000 + i, options);
    const wall = performance.now() - t0;
    if (r.roundTrips < SLOW_CLIENTS * 2 * SLOW_MESSAGES) throw new Error(`only ${r.roundTrips} round trips were checked`);
    if (i > 0) samples.push((wall * 1e6) / r.virtual);
  }
  const perOp = median(samples);
  results.add({
    scenario: VIRTUAL_SCENARIO,
    contender: `@bobbin/sim: ${SLOW_CLIENTS} clients pausing 0.1 s, with faults`,
    kind: "time",
    n: SLOW_CLIENTS * 2 * SLOW_MESSAGES,
    perOp,
    samples,
    note: `${Math.round(1e9 / perOp).toLocaleString("en")} simulated seconds per wall-clock second (time/op: wall time per simulated second; N: round trips per run)`,
  });
}

export async function run(results) {
  await plainRoundTrips(results);
  const { Sim, echoWorld, error } = await loadSim();
  for (const [scenario, contender, measureRow] of [
    [SCENARIO, `@bobbin/sim: ${CLIENTS} clients × 64 B round trips, no faults`, roundTrips],
    [VIRTUAL_SCENARIO, `@bobbin/sim: ${SLOW_CLIENTS} clients pausing 0.1 s, with faults`, virtualTime],
  ]) {
    if (error) {
      results.add({ scenario, contender, kind: "time", error });
      continue;
    }
    try {
      await measureRow(results, Sim, echoWorld);
    } catch (e) {
      results.add({ scenario, contender, kind: "time", error: errorMessage(e) });
    }
  }
  return results.rows;
}

// --- standalone: node bench/src/sim.js [--quick] ------------------------------------
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(`▶ ${SCENARIO}`);
  const all = await collectRows(run);
  console.log(`\n${textTable(all)}`);
  const notes = textNotes(all);
  if (notes) console.log(`\n${notes}`);
}
