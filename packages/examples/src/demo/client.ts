/**
 * The demo's built-in client, itself a Bobbin program: many connections,
 * each sending numbered messages and checking that each comes back intact.
 */
import * as B from "@bobbin/core";
import { type Address, close, connect, readExactly, sleep, tcpv4, write } from "@bobbin/unix";

/** What the client is asked to do. */
export interface Load {
  /** Connections in all. */
  readonly connections: number;
  /** Connections open at the same time. */
  readonly concurrency: number;
  /** Round trips per connection. */
  readonly roundTrips: number;
  /** Bytes per message. */
  readonly size: number;
}

/** What the client did (updated as it goes). */
export interface Progress {
  connections: number;
  roundTrips: number;
  bytes: number;
  readonly started: number;
}

/** Writes connection `id`'s message number `n` into `buf` (so that mixed-up echoes show). */
function fill(buf: Buffer, id: number, n: number): void {
  buf.fill(0x61 + ((id + n) % 26));
  buf.writeUInt32BE(id, 0);
  buf.writeUInt32BE(n, 4);
}

/**
 * One connection: `load.roundTrips` messages, each echoed back and compared.
 *
 * @throws Error when an echo differs from what was sent.
 */
export function* connection(address: Address, id: number, load: Load, progress: Progress): Generator<B.Instruction, void, unknown> {
  const socket = tcpv4();
  try {
    yield* connect(socket, address);
    const out = Buffer.alloc(load.size);
    const back = Buffer.alloc(load.size);
    for (let n = 0; n < load.roundTrips; n++) {
      fill(out, id, n);
      yield* write(socket, out);
      yield* readExactly(socket, back);
      if (!back.equals(out)) throw new Error(`connection ${id}: echo ${n} differs from what was sent`);
      progress.roundTrips++;
      progress.bytes += load.size;
    }
  } finally {
    yield* close(socket);
  }
  progress.connections++;
}

/**
 * Runs the whole load against `address`: `concurrency` tasks, each opening
 * connections one after the other until `connections` were made. Calls
 * `report` every `every` seconds (and once at the end).
 *
 * @example
 * ```ts
 * const progress = yield* drive(address, { connections: 500, concurrency: 50, roundTrips: 200, size: 64 }, show, 0.25);
 * ```
 * @throws the first connection's failure (the other tasks are cancelled).
 */
export function* drive(
  address: Address,
  load: Load,
  report: (p: Progress) => void,
  every: number,
): Generator<B.Instruction, Progress, unknown> {
  const progress: Progress = { connections: 0, roundTrips: 0, bytes: 0, started: performance.now() };
  let next = 0;
  function* worker(): Generator<B.Instruction, void, unknown> {
    while (next < load.connections) yield* connection(address, next++, load, progress);
  }
  const ticker = B.spawn(function* () {
    for (;;) {
      yield* sleep(every);
      report(progress);
    }
  });
  try {
    const workers = Array.from({ length: Math.min(load.concurrency, load.connections) }, () => B.spawn(worker));
    for (const r of yield* B.awaitAll(workers)) if (!r.ok) throw r.error;
  } finally {
    yield* B.cancel(ticker);
  }
  report(progress);
  return progress;
}
