// Fan-out/fan-in pipeline: a producer sends N items into a bounded channel of
// 64; 8 workers each receive items, transform them and send the results into a
// second bounded channel of 64; the main task receives every result and sums
// them. The channels are closed when their senders are done (Effect's queues
// have no close: the poison pill is its idiom). Checked: every item arrives, and
// the sum.

import * as E3 from "effect3";
import * as E4 from "effect4";
import * as Effection from "effection";
import { AsyncChannel, channelApi, EffectionChannel } from "./common.js";

export const NAME = "pipeline: 200k items, 8 workers, channels of 64";
export const UNIT = "item";
export const N = 200_000;
const WORKERS = 8;
const CAPACITY = 64;

/** The work a worker does on an item. */
const work = (x) => (x * 7 + 3) % 1000;

export function expected(n) {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += work(i);
  return sum;
}

// --- async/await: a hand-written bounded channel of promises ---------------------
async function asyncWorker(jobs, results) {
  for (let r = await jobs.recv(); !r.done; r = await jobs.recv()) await results.send(work(r.value));
}

async function asyncProducer(jobs, n) {
  for (let i = 0; i < n; i++) await jobs.send(i);
  jobs.close();
}

export async function asyncPipeline(n) {
  const jobs = new AsyncChannel(CAPACITY);
  const results = new AsyncChannel(CAPACITY);
  const producer = asyncProducer(jobs, n);
  const workers = [];
  for (let w = 0; w < WORKERS; w++) workers.push(asyncWorker(jobs, results));
  const fanIn = Promise.all(workers).then(() => results.close());
  let sum = 0;
  let count = 0;
  for (let r = await results.recv(); !r.done; r = await results.recv()) {
    sum += r.value;
    count++;
  }
  await Promise.all([producer, fanIn]);
  return count === n ? sum : -count;
}

// --- Effection 4: spawned tasks, the same bounded channel on withResolvers --------
function* effectionWorker(jobs, results) {
  for (let r = yield* jobs.recv(); !r.done; r = yield* jobs.recv()) yield* results.send(work(r.value));
}

function* effectionProducer(jobs, n) {
  for (let i = 0; i < n; i++) yield* jobs.send(i);
  jobs.close();
}

function* effectionWorkers(jobs, results) {
  const tasks = [];
  for (let w = 0; w < WORKERS; w++) tasks.push(yield* Effection.spawn(() => effectionWorker(jobs, results)));
  for (const t of tasks) yield* t;
  results.close();
}

function effectionPipeline(n) {
  return Effection.run(function* () {
    const jobs = new EffectionChannel(CAPACITY);
    const results = new EffectionChannel(CAPACITY);
    const producer = yield* Effection.spawn(() => effectionProducer(jobs, n));
    const workers = yield* Effection.spawn(() => effectionWorkers(jobs, results));
    let sum = 0;
    let count = 0;
    for (let r = yield* results.recv(); !r.done; r = yield* results.recv()) {
      sum += r.value;
      count++;
    }
    yield* producer;
    yield* workers;
    return count === n ? sum : -count;
  });
}

// --- Effect 3 / 4: Queue.bounded, forked fibers, a poison pill per reader ----------
const DONE = -1;

function effectPipeline(Effect, Queue, Fiber, fork) {
  const worker = (jobs, results) =>
    Effect.gen(function* () {
      for (;;) {
        const x = yield* Queue.take(jobs);
        if (x === DONE) return;
        yield* Queue.offer(results, work(x));
      }
    });
  const producer = (jobs, n) =>
    Effect.gen(function* () {
      for (let i = 0; i < n; i++) yield* Queue.offer(jobs, i);
      for (let w = 0; w < WORKERS; w++) yield* Queue.offer(jobs, DONE);
    });
  const workers = (jobs, results) =>
    Effect.gen(function* () {
      const fibers = [];
      for (let w = 0; w < WORKERS; w++) fibers.push(yield* fork(worker(jobs, results)));
      yield* Fiber.joinAll(fibers);
      yield* Queue.offer(results, DONE);
    });
  return (n) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const jobs = yield* Queue.bounded(CAPACITY);
        const results = yield* Queue.bounded(CAPACITY);
        const p = yield* fork(producer(jobs, n));
        const w = yield* fork(workers(jobs, results));
        let sum = 0;
        let count = 0;
        for (let x = yield* Queue.take(results); x !== DONE; x = yield* Queue.take(results)) {
          sum += x;
          count++;
        }
        yield* Fiber.join(p);
        yield* Fiber.join(w);
        return count === n ? sum : -count;
      }),
    );
}

// --- Bobbin: Channel, hoisted generator functions, a group ---------------------------
export function bobbinPipeline(B, S) {
  const { ended, value } = channelApi(S);
  function* worker(jobs, results) {
    for (let r = yield* jobs.recv(); !ended(r); r = yield* jobs.recv()) yield* results.send(work(value(r)));
  }
  function* producer(jobs, n) {
    for (let i = 0; i < n; i++) yield* jobs.send(i);
    jobs.close();
  }
  function* workers(jobs, results) {
    yield* B.group(function* (g) {
      for (let w = 0; w < WORKERS; w++) g.spawn(worker, jobs, results);
    });
    results.close();
  }
  function* main(n) {
    const jobs = new S.Channel(CAPACITY);
    const results = new S.Channel(CAPACITY);
    const p = B.spawn(producer, jobs, n);
    const w = B.spawn(workers, jobs, results);
    let sum = 0;
    let count = 0;
    for (let r = yield* results.recv(); !ended(r); r = yield* results.recv()) {
      sum += value(r);
      count++;
    }
    yield* B.awaitExn(p);
    yield* B.awaitExn(w);
    return count === n ? sum : -count;
  }
  return (n) =>
    B.run(function* () {
      return yield* main(n);
    });
}

export function contenders() {
  return [
    { contender: "async/await (hand-written bounded channel)", anchor: "async", fn: asyncPipeline },
    { contender: "Effection 4 (bounded channel on withResolvers)", fn: effectionPipeline },
    { contender: "Effect 3 (Queue.bounded)", fn: effectPipeline(E3.Effect, E3.Queue, E3.Fiber, E3.Effect.fork) },
    { contender: "Effect 4 (Queue.bounded)", fn: effectPipeline(E4.Effect, E4.Queue, E4.Fiber, E4.Effect.forkChild) },
  ];
}

export const bobbin = [{ contender: "Bobbin (Channel)", make: bobbinPipeline }];
