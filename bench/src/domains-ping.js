// The floors of the Domains `call` round-trip rows (bench/src/domains.js):
// echoes of numbers on `threads` plain worker_threads (domains-ping-worker.js),
// call i of a round on thread i % threads, at most `window` in flight, awaited
// in order — the pattern of the Bobbin and piscina rows without a scheduler,
// a task or a message format on either side.
//
//   PostPingPong: one postMessage each way per call (what a worker pool that
//   talks through messages pays at least).
//   AtomicsPingPong: a SharedArrayBuffer ring per thread and Atomics.wait /
//   Atomics.notify on both sides: no message and no event loop, dom0 blocked
//   while it waits (the floor; a real program cannot block its main thread so).
//
// Each is made once per row and then measured round after round (`round(n)`
// returns the sum of the echoes), so that rounds of every contender can be
// interleaved.
import { Worker } from "node:worker_threads";

const PING_WORKER = new URL("./domains-ping-worker.js", import.meta.url);

/** Int32 cells of one thread's SharedArrayBuffer: two counters, then a ring of requests and one of replies. */
export const ATOMICS_LAYOUT = { requested: 0, replied: 1, slots: 64, requests: 2, replies: 2 + 64 };
/** Written into `requested`: the worker stops. */
export const STOP = -1;

/**
 * The sum of `start(i)`'s results for i in 0..n-1, with at most `window` calls
 * in flight, awaited in order (1: sequential).
 */
export async function slidingWindow(n, window, start) {
  const ring = new Array(window);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const slot = i % window;
    if (i >= window) sum += await ring[slot];
    ring[slot] = start(i);
  }
  for (let i = Math.max(0, n - window); i < n; i++) sum += await ring[i % window];
  return sum;
}

function startWorkers(threads, workerData) {
  const workers = Array.from({ length: threads }, (_, j) => new Worker(PING_WORKER, { workerData: workerData(j) }));
  const online = Promise.all(workers.map((w) => new Promise((resolve, reject) => w.once("online", resolve).once("error", reject))));
  return { workers, online };
}

export class PostPingPong {
  /** Resolves once the workers run. */
  static async start(threads, window) {
    const { workers, online } = startWorkers(threads, () => ({ mode: "post" }));
    await online;
    return new PostPingPong(workers, window);
  }

  constructor(workers, window) {
    this.workers = workers;
    this.window = window;
    // A worker replies in order: its pending calls' resolvers, oldest first.
    this.waiting = workers.map(() => []);
    workers.forEach((w, j) => {
      w.on("message", (x) => this.waiting[j].shift()(x));
    });
  }

  send(i) {
    const j = i % this.workers.length;
    return new Promise((resolve) => {
      this.waiting[j].push(resolve);
      this.workers[j].postMessage(i);
    });
  }

  round(n) {
    return slidingWindow(n, this.window, (i) => this.send(i));
  }

  close() {
    return Promise.all(this.workers.map((w) => w.terminate()));
  }
}

export class AtomicsPingPong {
  static async start(threads, window) {
    if (window > ATOMICS_LAYOUT.slots) throw new RangeError(`AtomicsPingPong: at most ${ATOMICS_LAYOUT.slots} calls in flight`);
    const L = ATOMICS_LAYOUT;
    const rings = Array.from({ length: threads }, () => new Int32Array(new SharedArrayBuffer(4 * (2 + 2 * L.slots))));
    const { workers, online } = startWorkers(threads, (j) => ({ mode: "atomics", cells: rings[j].buffer }));
    await online;
    return new AtomicsPingPong(workers, rings, window);
  }

  constructor(workers, rings, window) {
    this.exited = workers.map((w) => new Promise((resolve) => w.once("exit", resolve)));
    this.rings = rings;
    this.window = window;
    /** Calls made in earlier rounds: the rings' counters keep counting. */
    this.base = 0;
  }

  /** The echo of call `k` (counted over all rounds), waiting for it. */
  reply(k) {
    const L = ATOMICS_LAYOUT;
    const cells = this.rings[k % this.rings.length];
    const seq = Math.floor(k / this.rings.length);
    for (let done = Atomics.load(cells, L.replied); done <= seq; done = Atomics.load(cells, L.replied))
      Atomics.wait(cells, L.replied, done);
    return cells[L.replies + (seq % L.slots)];
  }

  send(k, value) {
    const L = ATOMICS_LAYOUT;
    const cells = this.rings[k % this.rings.length];
    const seq = Math.floor(k / this.rings.length);
    cells[L.requests + (seq % L.slots)] = value;
    Atomics.store(cells, L.requested, seq + 1);
    Atomics.notify(cells, L.requested);
  }

  async round(n) {
    const { window, base } = this;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      if (i >= window) sum += this.reply(base + i - window);
      this.send(base + i, i);
    }
    for (let i = Math.max(0, n - window); i < n; i++) sum += this.reply(base + i);
    this.base += n;
    return sum;
  }

  close() {
    for (const cells of this.rings) {
      Atomics.store(cells, ATOMICS_LAYOUT.requested, STOP);
      Atomics.notify(cells, ATOMICS_LAYOUT.requested);
    }
    return Promise.all(this.exited);
  }
}
