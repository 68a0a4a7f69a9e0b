// Scatter-gather with cancellation: N requests, at most 100 in flight; each
// starts 5 sub-tasks, keeps the first 3 answers and cancels the other 2, then
// waits for their cleanup before it answers. Sub-task i of request r waits
// DELAYS[(r + i) % 5] turns of its scheduler (its "I/O") and answers r * 8 + i,
// so which 3 answer first does not depend on the scheduler: the slow two would
// need 17 more turns than the third (Effection's queue took more than 8 turns to
// wake the request; the others wake it in one or two). Every sub-task counts its cleanup
// (a `finally`, or the system's finalizer), and the cancelled ones count
// themselves. Checked: the sum of the kept answers, 5 cleanups and exactly 2
// cancellations per request.

import * as E3 from "effect3";
import * as E4 from "effect4";
import * as Effection from "effection";
import pLimit from "p-limit";
import { channelApi, effectionYield } from "./common.js";

export const NAME = "scatter-gather: 20k requests × 5 sub-tasks, first 3 kept";
export const UNIT = "request";
export const N = 20_000;
const SUBS = 5;
const KEEP = 3;
const IN_FLIGHT = 100;
const DELAYS = [1, 2, 3, 20, 21];

const delayOf = (r, i) => DELAYS[(r + i) % SUBS];
const answerOf = (r, i) => r * 8 + i;

export function expected(n) {
  let sum = 0;
  for (let r = 0; r < n; r++) for (let i = 0; i < SUBS; i++) if (delayOf(r, i) <= DELAYS[KEEP - 1]) sum += answerOf(r, i);
  return sum;
}

/** The counts every program keeps, and its checked answer. */
class Counters {
  cleanups = 0;
  cancelled = 0;

  answer(n, sum) {
    return this.cleanups === n * SUBS && this.cancelled === n * (SUBS - KEEP)
      ? sum
      : `${this.cleanups} cleanups, ${this.cancelled} cancelled`;
  }
}

// --- async/await: AbortController, p-limit for the requests in flight ------------
async function asyncSub(r, i, signal, counters) {
  let finished = false;
  try {
    for (let k = delayOf(r, i); k > 0; k--) {
      await null;
      signal.throwIfAborted();
    }
    finished = true;
    return answerOf(r, i);
  } finally {
    counters.cleanups++;
    if (!finished) counters.cancelled++;
  }
}

async function asyncRequest(r, counters) {
  const controller = new AbortController();
  const subs = [];
  let sum = 0;
  await new Promise((resolve) => {
    let kept = 0;
    const keep = (v) => {
      if (kept < KEEP) {
        sum += v;
        if (++kept === KEEP) resolve();
      }
    };
    for (let i = 0; i < SUBS; i++) {
      const p = asyncSub(r, i, controller.signal, counters);
      p.then(keep, () => {});
      subs.push(p);
    }
  });
  controller.abort();
  await Promise.allSettled(subs);
  return sum;
}

async function asyncScatter(n) {
  const counters = new Counters();
  const limit = pLimit(IN_FLIGHT);
  const requests = [];
  for (let r = 0; r < n; r++) requests.push(limit(asyncRequest, r, counters));
  let sum = 0;
  for (const s of await Promise.all(requests)) sum += s;
  return counters.answer(n, sum);
}

// --- Effection 4: a scope per request (leaving it halts the rest), a queue -------
function* effectionSub(r, i, answers, counters) {
  let finished = false;
  try {
    for (let k = delayOf(r, i); k > 0; k--) yield* effectionYield;
    finished = true;
    answers.add(answerOf(r, i));
  } finally {
    counters.cleanups++;
    if (!finished) counters.cancelled++;
  }
}

function effectionRequest(r, counters) {
  return Effection.scoped(function* () {
    const answers = Effection.createQueue();
    for (let i = 0; i < SUBS; i++) yield* Effection.spawn(() => effectionSub(r, i, answers, counters));
    let sum = 0;
    for (let k = 0; k < KEEP; k++) sum += (yield* answers.next()).value;
    return sum;
  });
}

function effectionScatter(n) {
  return Effection.run(function* () {
    const counters = new Counters();
    let next = 0;
    let sum = 0;
    // No built-in limit: 100 workers take the requests in turn.
    function* worker() {
      while (next < n) {
        const s = yield* effectionRequest(next++, counters);
        sum += s;
      }
    }
    const workers = [];
    for (let w = 0; w < IN_FLIGHT; w++) workers.push(yield* Effection.spawn(worker));
    for (const t of workers) yield* t;
    return counters.answer(n, sum);
  });
}

// --- Effect 3 / 4: forked fibers, a queue, Fiber.interruptAll, forEach({ concurrency }) ---
function effectScatter(Effect, Queue, Fiber, fork, yieldNow) {
  const sub = (r, i, answers, counters) =>
    Effect.gen(function* () {
      for (let k = delayOf(r, i); k > 0; k--) yield* yieldNow;
      yield* Queue.offer(answers, answerOf(r, i));
    }).pipe(
      Effect.onInterrupt(() => Effect.sync(() => counters.cancelled++)),
      Effect.ensuring(Effect.sync(() => counters.cleanups++)),
    );
  const request = (r, counters) =>
    Effect.gen(function* () {
      const answers = yield* Queue.unbounded();
      const fibers = [];
      for (let i = 0; i < SUBS; i++) fibers.push(yield* fork(sub(r, i, answers, counters)));
      let sum = 0;
      for (let k = 0; k < KEEP; k++) sum += yield* Queue.take(answers);
      yield* Fiber.interruptAll(fibers);
      return sum;
    });
  return (n) => {
    const counters = new Counters();
    const ids = Array.from({ length: n }, (_, r) => r);
    return Effect.runPromise(
      Effect.map(
        Effect.forEach(ids, (r) => request(r, counters), { concurrency: IN_FLIGHT }),
        (sums) =>
          counters.answer(
            n,
            sums.reduce((a, b) => a + b, 0),
          ),
      ),
    );
  };
}

// --- Bobbin: spawned sub-tasks, a channel, B.cancel of the rest; forEach({ concurrency }) ---
// Two ways a Bobbin program writes a request: spawn the sub-tasks and cancel
// what is left (as Miou, and Effect's fork + interruptAll), or a group whose
// body cancels it (as Trio's nursery, and Effection's scope).
function bobbinSubOf(B) {
  return function* sub(r, i, answers, counters) {
    let finished = false;
    try {
      for (let k = delayOf(r, i); k > 0; k--) yield* B.yieldNow();
      finished = true;
      yield* answers.send(answerOf(r, i));
    } finally {
      counters.cleanups++;
      if (!finished) counters.cancelled++;
    }
  };
}

function bobbinRequests(B, request) {
  return (n) =>
    B.run(function* () {
      const counters = new Counters();
      const ids = Array.from({ length: n }, (_, r) => r);
      let sum = 0;
      yield* B.forEach(
        ids,
        function* (r) {
          const s = yield* request(r, counters);
          sum += s;
        },
        { concurrency: IN_FLIGHT },
      );
      return counters.answer(n, sum);
    });
}

export function bobbinScatter(B, S) {
  const { value } = channelApi(S);
  const sub = bobbinSubOf(B);
  function* request(r, counters) {
    const answers = new S.Channel(SUBS);
    const subs = [];
    for (let i = 0; i < SUBS; i++) subs.push(B.spawn(sub, r, i, answers, counters));
    let sum = 0;
    for (let k = 0; k < KEEP; k++) sum += value(yield* answers.recv());
    for (const t of subs) yield* B.cancel(t); // the two still running are cancelled; all are awaited
    return sum;
  }
  return bobbinRequests(B, request);
}

export function bobbinScatterGroup(B, S) {
  const { value } = channelApi(S);
  const sub = bobbinSubOf(B);
  function* request(r, counters) {
    const answers = new S.Channel(SUBS);
    return yield* B.group(function* (g) {
      for (let i = 0; i < SUBS; i++) g.spawn(sub, r, i, answers, counters);
      let sum = 0;
      for (let k = 0; k < KEEP; k++) sum += value(yield* answers.recv());
      g.cancel();
      return sum;
    });
  }
  return bobbinRequests(B, request);
}

export function contenders() {
  return [
    { contender: "async/await + p-limit (AbortController)", anchor: "async", fn: asyncScatter },
    { contender: "Effection 4 (scoped, createQueue)", fn: effectionScatter },
    {
      contender: "Effect 3 (fork, Queue, interruptAll)",
      fn: effectScatter(E3.Effect, E3.Queue, E3.Fiber, E3.Effect.fork, E3.Effect.yieldNow()),
    },
    {
      contender: "Effect 4 (forkChild, Queue, interruptAll)",
      fn: effectScatter(E4.Effect, E4.Queue, E4.Fiber, E4.Effect.forkChild, E4.Effect.yieldNow),
    },
  ];
}

export const bobbin = [
  { contender: "Bobbin (spawn, Channel, B.cancel, forEach)", make: bobbinScatter },
  { contender: "Bobbin (B.group, g.cancel(), Channel, forEach)", make: bobbinScatterGroup, reference: true },
];
