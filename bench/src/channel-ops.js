// @bobbin/sync's Channel, operation by operation, against a plain array queue
// (the floor: what a queue costs) and async/await's hand-written bounded channel
// (src/programs/common.js), in time and in bytes allocated per operation:
//
//   1. send + recv with room and a value waiting: one task sends i and receives
//      it back, N times (the fast paths: nothing waits);
//   2. round trip between two tasks: ping on one rendezvous channel, pong on
//      another, N times (every operation waits: the waiting paths);
//   3. select over two channels, one holding a value: N selects.
//
// BOBBIN_BEFORE=<checkout> adds the Bobbin of another checkout (built) beside
// this one: before and after in one run. Time rows run in this process, the
// contenders of a scenario in interleaved rounds; bytes rows run each contender
// in its own `node --expose-gc` child process, and count the young-generation
// bytes allocated across any collections (v8.GCProfiler's before/after heaps).
//
//   node --expose-gc bench/src/channel-ops.js [--quick]

import os from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { GCProfiler, getHeapSpaceStatistics } from "node:v8";
import { childJson, collectRows, gc, interleave, machine, markdown, median, QUICK, textNotes, textTable, writeFile } from "./harness.js";
import { AsyncChannel, channelApi, commitOf, loadBobbin } from "./programs/common.js";

export const SCENARIO = "channel operations";
const SELF = fileURLToPath(import.meta.url);
const FAST = "channel send + recv, room and a value waiting";
const TRIP = "channel round trip between two tasks";
const SELECT = "select over two channels, one ready";
const N = { [FAST]: QUICK ? 200_000 : 1_000_000, [TRIP]: QUICK ? 50_000 : 200_000, [SELECT]: QUICK ? 200_000 : 1_000_000 };
/** Each pair, round trip or select moves i; the checksum adds them up modulo 2^30 (a small integer: no heap number). */
const checksum = (n) => {
  let sum = 0;
  for (let i = 0; i < n; i++) sum = (sum + i) & 0x3fffffff;
  return sum;
};

// --- the contenders, by scenario --------------------------------------------------

function queueFast(n) {
  const q = [];
  let sum = 0;
  for (let i = 0; i < n; i++) {
    q.push(i);
    sum = (sum + q.shift()) & 0x3fffffff;
  }
  return sum;
}

/** Two `yield*`s of operations that complete at once and do nothing else: what a generator-based send + recv cannot go below. */
const DONE_RESULT = { done: true, value: 0 };
const DONE_ITERATOR = { next: () => DONE_RESULT };
const NOTHING = { [Symbol.iterator]: () => DONE_ITERATOR };
function* yieldStars(n) {
  let sum = 0;
  for (let i = 0; i < n; i++) {
    DONE_RESULT.value = i;
    yield* NOTHING;
    sum = (sum + (yield* NOTHING)) & 0x3fffffff;
  }
  return sum;
}

function protocolFloor(n) {
  return yieldStars(n).next().value;
}

async function asyncFast(n) {
  const ch = new AsyncChannel(1);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    await ch.send(i);
    sum = (sum + (await ch.recv()).value) & 0x3fffffff;
  }
  return sum;
}

async function asyncTrip(n) {
  const ping = new AsyncChannel(0);
  const pong = new AsyncChannel(0);
  const echo = (async () => {
    for (let r = await ping.recv(); !r.done; r = await ping.recv()) await pong.send(r.value);
  })();
  let sum = 0;
  for (let i = 0; i < n; i++) {
    await ping.send(i);
    sum = (sum + (await pong.recv()).value) & 0x3fffffff;
  }
  ping.close();
  await echo;
  return sum;
}

/** The Bobbin contenders of each scenario, for one loaded Bobbin (either channel API). */
function bobbinOps(B, S) {
  const { ended, value } = channelApi(S);
  function* fast(n) {
    const ch = new S.Channel(1);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      yield* ch.send(i);
      sum = (sum + value(yield* ch.recv())) & 0x3fffffff;
    }
    return sum;
  }
  function* echo(ping, pong) {
    for (let r = yield* ping.recv(); !ended(r); r = yield* ping.recv()) yield* pong.send(value(r));
  }
  function* trip(n) {
    const ping = new S.Channel(0);
    const pong = new S.Channel(0);
    const t = B.spawn(echo, ping, pong);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      yield* ping.send(i);
      sum = (sum + value(yield* pong.recv())) & 0x3fffffff;
    }
    ping.close();
    yield* B.awaitExn(t);
    return sum;
  }
  function* select(n) {
    const a = new S.Channel(1);
    const b = new S.Channel(1);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      yield* a.send(i);
      const r = yield* B.select([b.recv(), a.recv()]);
      sum = (sum + value(r.value)) & 0x3fffffff;
    }
    return sum;
  }
  const run = (body) => (n) =>
    B.run(function* () {
      return yield* body(n);
    });
  return { [FAST]: run(fast), [TRIP]: run(trip), [SELECT]: run(select) };
}

/** Every contender of every scenario: { scenario, contender, anchor?, key, fn }. */
async function contenders(roots) {
  const list = [
    { scenario: FAST, contender: "plain array queue (push + shift): floor", anchor: "floor", key: "queue", fn: queueFast },
    { scenario: FAST, contender: "two yield* of operations that do nothing (a generator's floor)", key: "yields", fn: protocolFloor },
    { scenario: FAST, contender: "async/await (hand-written bounded channel)", anchor: "async", key: "async", fn: asyncFast },
    { scenario: TRIP, contender: "async/await (hand-written bounded channel)", anchor: "async", key: "async", fn: asyncTrip },
  ];
  for (const root of roots) {
    const { B, S, error } = await loadBobbin(root ?? undefined);
    const ops = B ? bobbinOps(B, S) : null;
    const contender = root ? `Bobbin Channel, before (${commitOf(root)})` : "Bobbin Channel";
    for (const scenario of [FAST, TRIP, SELECT]) {
      list.push({ scenario, contender, key: root ? "before" : "bobbin", root, fn: ops?.[scenario] ?? null, error });
    }
  }
  return list.map((c) => ({ ...c, n: N[c.scenario] }));
}

// --- bytes: one contender in a child process ------------------------------------------

function youngOf(spaces) {
  let used = 0;
  for (const s of spaces) if (s.spaceName === "new_space" || s.spaceName === "new_large_object_space") used += s.spaceUsedSize;
  return used;
}

/** Young-generation bytes allocated while `fn(n)` runs, counted across the collections meanwhile. */
async function youngBytes(fn, n) {
  gc();
  const profiler = new GCProfiler();
  profiler.start();
  const before = youngOf(getHeapSpaceStatistics().map((s) => ({ spaceName: s.space_name, spaceUsedSize: s.space_used_size })));
  const answer = await fn(n);
  const after = youngOf(getHeapSpaceStatistics().map((s) => ({ spaceName: s.space_name, spaceUsedSize: s.space_used_size })));
  const { statistics } = profiler.stop();
  if (answer !== checksum(n)) throw new Error(`wrong answer ${answer}`);
  let allocated = 0;
  let from = before;
  for (const g of statistics) {
    allocated += youngOf(g.beforeGC.heapSpaceStatistics) - from;
    from = youngOf(g.afterGC.heapSpaceStatistics);
  }
  return allocated + after - from;
}

async function childMain(scenario, key, n) {
  const c = (await contenders(key === "before" ? [process.env.BOBBIN_BEFORE] : [null])).find(
    (x) => x.scenario === scenario && x.key === key,
  );
  if (!c?.fn) throw new Error(c?.error ?? `no contender ${key} for ${scenario}`);
  await c.fn(Math.min(n, 50_000)); // warm-up: load, compile
  const samples = [];
  for (let r = 0; r < 3; r++) samples.push((await youngBytes(c.fn, n)) / n);
  process.stdout.write(`${JSON.stringify({ perOp: median(samples), samples })}\n`);
}

function runChild(c) {
  return childJson(["--expose-gc", SELF, "--child", c.scenario, c.key, String(c.n)], {
    timeoutMs: 180_000,
    env: { ...process.env, BOBBIN_BEFORE: c.root ?? "" },
  });
}

// --- the scenario ---------------------------------------------------------------------------

export async function run(results) {
  const before = process.env.BOBBIN_BEFORE;
  const all = await contenders(before ? [null, before] : [null]);
  for (const scenario of [FAST, TRIP, SELECT]) {
    const cs = all.filter((c) => c.scenario === scenario);
    const measured = await interleave(cs, { expected: checksum, label: scenario });
    for (const c of cs) {
      results.add({
        scenario: `${scenario} (time per op)`,
        contender: c.contender,
        anchor: c.anchor,
        n: c.n,
        kind: "time",
        ...measured.get(c),
      });
    }
    for (const c of cs) {
      // No floor in bytes: ratios to the queue's 0 B say nothing.
      const row = {
        scenario: `${scenario} (bytes allocated per op)`,
        contender: c.contender,
        anchor: c.anchor === "async" ? "async" : undefined,
        n: c.n,
        kind: "bytes",
      };
      if (!c.fn) {
        results.add({ ...row, error: c.error ?? "not available" });
        continue;
      }
      try {
        results.add({ ...row, ...(await runChild(c)) });
      } catch (e) {
        results.add({ ...row, error: e?.message ?? String(e) });
      }
    }
  }
}

if (process.argv[2] === "--child") {
  const [, , , scenario, key, n] = process.argv;
  childMain(scenario, key, Number(n)).catch((e) => {
    process.stderr.write(`${e?.stack ? e.stack : e}\n`);
    process.exit(1);
  });
} else if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = new Date();
  const t0 = performance.now();
  const m = machine();
  const load = os.loadavg()[0];
  console.log(`Machine: ${m.cpu} · ${m.cores} cores · Node ${m.node} (V8 ${m.v8}) · load average ${load.toFixed(1)}`);
  console.log(`▶ ${SCENARIO}`);
  const rows = await collectRows(run);
  const seconds = (performance.now() - t0) / 1000;
  const extraNotes = [
    "an op is a send + recv pair, a round trip (two sends, two receives) or a select; time: medians of 7 interleaved rounds after 2 warm-up rounds; bytes: medians of 3 runs, each contender in its own child process",
    `load average ${load.toFixed(1)} at the start and ${os.loadavg()[0].toFixed(1)} at the end on ${m.cores} cores`,
  ];
  console.log(`\n${textTable(rows)}`);
  console.log(`\n${textNotes(rows, extraNotes)}`);
  if (!QUICK) {
    const out = fileURLToPath(new URL("../results/channels.md", import.meta.url));
    writeFile(
      out,
      markdown(rows, m, {
        started,
        seconds,
        extraNotes,
        title: "Channel operations",
        command: `${process.env.BOBBIN_BEFORE ? "BOBBIN_BEFORE=<a checkout of main> " : ""}node --expose-gc bench/src/channel-ops.js`,
      }),
    );
    console.log(`Markdown written to ${out}`);
  }
}
