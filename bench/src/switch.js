// Scenario 2 — context switch.
// FIBERS fibers each yield to the scheduler SWITCHES / FIBERS times, round robin,
// so the run does SWITCHES switches in total. Reported: time per switch.

import * as E3 from "effect3";
import * as E4 from "effect4";
import * as Effection from "effection";
import { QUICK, runContenders } from "./harness.js";

export const SCENARIO = "context switch";
const SWITCHES = QUICK ? 200_000 : 1_000_000;
const FIBERS = 2; // ping-pong

// --- the floor: a hand-written round robin over plain generators --------------
function* rawWorker(n) {
  for (let i = 0; i < n; i++) yield;
  return n;
}
function rawRoundRobin(total) {
  const per = total / FIBERS;
  const gens = new Array(FIBERS);
  for (let f = 0; f < FIBERS; f++) gens[f] = rawWorker(per);
  let alive = FIBERS;
  let sum = 0;
  while (alive > 0) {
    for (let f = 0; f < gens.length; f++) {
      const g = gens[f];
      if (g === null) continue;
      const r = g.next();
      if (r.done) {
        gens[f] = null;
        alive--;
        sum += r.value;
      }
    }
  }
  return sum;
}

// --- the yield*+FIFO floor: the same fibers as Bobbin's, `yield* B.yieldNow()`, --
// driven by a bare ring of generators resumed with the operation's resumption
// value: what a switch costs with nothing of a kernel around it.
function makeFifoFloor(B) {
  const op = B.yieldNow()[Symbol.iterator]();
  const YIELD = op.next().value;
  let resumed; // the resumption value yieldNow's operation expects (found once, from the kernel itself)
  const found = B.run(function* () {
    yield* {
      [Symbol.iterator]() {
        return this;
      },
      next(value) {
        if (value === undefined) return op.next();
        resumed = value;
        return { done: true, value: undefined };
      },
    };
  });
  function* worker(n) {
    for (let i = 0; i < n; i++) yield* B.yieldNow();
    return n;
  }
  function roundRobin(total, w = worker, args = [total / FIBERS]) {
    const ring = new Array(16);
    let head = 0;
    let tail = 0;
    for (let f = 0; f < FIBERS; f++) ring[tail++] = { gen: w(...args, f), value: undefined };
    let sum = 0;
    while (head !== tail) {
      const fiber = ring[head];
      ring[head] = undefined;
      head = (head + 1) & 15;
      const r = fiber.gen.next(fiber.value);
      if (r.done) sum += r.value;
      else if (r.value === YIELD) {
        fiber.value = resumed;
        ring[tail] = fiber;
        tail = (tail + 1) & 15;
      } else throw new Error("the floor's fibers only yield");
    }
    return sum;
  }
  function* traced(log, f) {
    for (let i = 0; i < 4; i++) {
      log.push(f === 0 ? "a" : "b");
      yield* B.yieldNow();
    }
    return 0;
  }
  const trace = async () => {
    await found;
    const log = [];
    roundRobin(0, traced, [log]);
    return log.join("");
  };
  return { fn: (total) => found.then(() => roundRobin(total)), trace };
}

// --- async/await: `await null` ping-pong through the microtask queue -----------
async function asyncWorker(n) {
  for (let i = 0; i < n; i++) await null;
  return n;
}
export async function asyncPingPong(total) {
  const per = total / FIBERS;
  const ps = new Array(FIBERS);
  for (let f = 0; f < FIBERS; f++) ps[f] = asyncWorker(per);
  let sum = 0;
  for (let f = 0; f < FIBERS; f++) sum += await ps[f];
  return sum;
}

// --- Effection 4 ---------------------------------------------------------------
// Effection 4 has no public `yield`. `sleep(0)` goes through setTimeout (≥1 ms).
// The cheapest honest equivalent is an action that resolves synchronously: the
// resolution re-enqueues the task at the back of Effection's reducer queue, so the
// other task runs before it resumes (verified: the two tasks strictly alternate).
const effectionYield = Effection.action((resolve) => {
  resolve();
  return noop;
}, "yield");
function noop() {}
function* effectionWorker(n) {
  for (let i = 0; i < n; i++) yield* effectionYield;
  return n;
}
function effectionPingPong(total) {
  const per = total / FIBERS;
  return Effection.run(function* () {
    const tasks = new Array(FIBERS);
    for (let f = 0; f < FIBERS; f++) tasks[f] = yield* Effection.spawn(() => effectionWorker(per));
    let sum = 0;
    for (let f = 0; f < FIBERS; f++) sum += yield* tasks[f];
    return sum;
  });
}

// --- Effect 3 / 4: Effect.yieldNow ---------------------------------------------
function effectPingPong(Effect, Fiber, fork, yieldNow, total) {
  const per = total / FIBERS;
  const worker = Effect.gen(function* () {
    for (let i = 0; i < per; i++) yield* yieldNow;
    return per;
  });
  return Effect.runPromise(
    Effect.gen(function* () {
      const fibers = new Array(FIBERS);
      for (let f = 0; f < FIBERS; f++) fibers[f] = yield* fork(worker);
      let sum = 0;
      for (let f = 0; f < FIBERS; f++) sum += yield* Fiber.join(fibers[f]);
      return sum;
    }),
  );
}
const effect3PingPong = (total) => effectPingPong(E3.Effect, E3.Fiber, E3.Effect.fork, E3.Effect.yieldNow(), total);
const effect4PingPong = (total) => effectPingPong(E4.Effect, E4.Fiber, E4.Effect.forkChild, E4.Effect.yieldNow, total);

// --- Bobbin: yield* B.yieldNow() ----------------------------------------------
function makeBobbin(B) {
  function* worker(n) {
    for (let i = 0; i < n; i++) yield* B.yieldNow();
    return n;
  }
  function* main(total) {
    const per = total / FIBERS;
    const tasks = new Array(FIBERS);
    for (let f = 0; f < FIBERS; f++) tasks[f] = B.spawn(worker, per);
    let sum = 0;
    for (let f = 0; f < FIBERS; f++) sum += yield* B.awaitExn(tasks[f]);
    return sum;
  }
  return (total) =>
    B.run(function* () {
      return yield* main(total);
    });
}

// --- self-check: with two fibers, every contender's workers must strictly alternate,
// so that no row is fast because its "yield" did not actually switch. -------------
const ALTERNATING = "abababab";
function* rawTraceWorker(log, id) {
  for (let i = 0; i < 4; i++) {
    log.push(id);
    yield;
  }
}
function traceRaw() {
  const log = [];
  const gens = [rawTraceWorker(log, "a"), rawTraceWorker(log, "b")];
  let alive = gens.length;
  while (alive > 0)
    for (let f = 0; f < gens.length; f++) {
      if (gens[f]?.next().done) {
        gens[f] = null;
        alive--;
      }
    }
  return log.join("");
}
async function traceAsync() {
  const log = [];
  const w = async (id) => {
    for (let i = 0; i < 4; i++) {
      log.push(id);
      await null;
    }
  };
  await Promise.all([w("a"), w("b")]);
  return log.join("");
}
async function traceEffection() {
  const log = [];
  await Effection.run(function* () {
    const w = (id) =>
      function* () {
        for (let i = 0; i < 4; i++) {
          log.push(id);
          yield* effectionYield;
        }
      };
    const a = yield* Effection.spawn(w("a"));
    const b = yield* Effection.spawn(w("b"));
    yield* a;
    yield* b;
  });
  return log.join("");
}
function traceEffect(Effect, Fiber, fork, yieldNow) {
  return async () => {
    const log = [];
    const w = (id) =>
      Effect.gen(function* () {
        for (let i = 0; i < 4; i++) {
          log.push(id);
          yield* yieldNow;
        }
      });
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* fork(w("a"));
        const b = yield* fork(w("b"));
        yield* Fiber.join(a);
        yield* Fiber.join(b);
      }),
    );
    return log.join("");
  };
}
function traceBobbin(B) {
  function* w(log, id) {
    for (let i = 0; i < 4; i++) {
      log.push(id);
      yield* B.yieldNow();
    }
  }
  return async () => {
    const log = [];
    await B.run(function* () {
      const a = B.spawn(w, log, "a");
      const b = B.spawn(w, log, "b");
      yield* B.awaitExn(a);
      yield* B.awaitExn(b);
    });
    return log.join("");
  };
}

export function contenders({ B, bobbinError }) {
  const fifo = B ? makeFifoFloor(B) : null;
  return [
    { contender: "raw generator round-robin", anchor: "floor", n: SWITCHES, fn: rawRoundRobin, trace: traceRaw },
    {
      contender: "yield*+FIFO floor",
      anchor: "fifo",
      n: SWITCHES,
      fn: fifo?.fn ?? null,
      trace: fifo?.trace ?? null,
      error: bobbinError,
      note: "Bobbin's fibers (`yield* B.yieldNow()`) resumed by a bare FIFO ring of generators: a switch with nothing of a kernel around it",
    },
    { contender: "async/await (`await null`)", anchor: "async", n: SWITCHES, fn: asyncPingPong, trace: traceAsync },
    {
      contender: "Effection 4",
      apart: true,
      n: SWITCHES,
      fn: effectionPingPong,
      trace: traceEffection,
      note: "no public yield: yields an action that resolves at once (re-queues the task behind the other); sleep(0) would be a ≥1 ms timer",
    },
    {
      contender: "Effect 3 (yieldNow)",
      apart: true,
      n: SWITCHES,
      fn: effect3PingPong,
      trace: traceEffect(E3.Effect, E3.Fiber, E3.Effect.fork, E3.Effect.yieldNow()),
    },
    {
      contender: "Effect 4 (yieldNow)",
      apart: true,
      n: SWITCHES,
      fn: effect4PingPong,
      trace: traceEffect(E4.Effect, E4.Fiber, E4.Effect.forkChild, E4.Effect.yieldNow),
    },
    {
      contender: "Bobbin (yieldNow)",
      n: SWITCHES,
      fn: B ? makeBobbin(B) : null,
      trace: B ? traceBobbin(B) : null,
      error: bobbinError,
      targetSpec: {
        against: "floor",
        max: 2.0,
        text: "≤ 2.0× raw generator, ≤ 1.15× yield*+FIFO",
        extra: (r) => r.vs.fifo != null && r.vs.fifo <= 1.15,
        alsoAgainst: { anchor: "fifo", name: "the yield*+FIFO floor" },
      },
    },
  ];
}

/** The anchors and Bobbin share rounds (see `interleave`), timed in CPU time; the others run apart. */
export const INTERLEAVE = { iters: 15, clock: "cpu" };

export async function run(results, ctx) {
  await runContenders(results, contenders(ctx), {
    scenario: SCENARIO,
    interleave: INTERLEAVE,
    check: async (c) => {
      const order = await c.trace();
      if (order !== ALTERNATING) throw new Error(`two fibers ran in order ${order}, expected ${ALTERNATING}: its yield does not switch`);
    },
  });
}
