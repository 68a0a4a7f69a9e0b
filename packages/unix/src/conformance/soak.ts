/**
 * The soak test: an echo server on the backend under test and a thousand
 * connections from plain Node clients, each of a random size up to 256 KiB,
 * some of them reset by the client or half-closed mid-message, some cut
 * short by the server. Every byte that comes back is compared; every
 * connection's bytes are counted on both sides; the process's handles and
 * file descriptors are counted before and after. Bounded in connections and
 * in time (a client waits 20 s at most).
 */
import * as net from "node:net";
import * as B from "@bobbin/core";
import { accept, close, EndOfFile, read, readExactly, type Socket, withTimeout, write } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { LO4, loopbackListener, openFds, pattern } from "./support.js";

/** What a connection does. */
const enum Fate {
  /** Sends its message, reads the whole echo, then ends. */
  Whole = 0,
  /** Sends `cut` bytes, half-closes, and reads their echo to the end of the stream. */
  HalfClose = 1,
  /** Sends `cut` bytes, then resets the connection. */
  ClientReset = 2,
  /** Sends its message; the server echoes `cut` bytes and closes with the rest unread (a reset). */
  ServerAbort = 3,
}

/** The header a client sends first: fate (1 byte), connection id, cut (4 bytes each, big-endian). */
const HEADER = 9;

/** One connection's plan. */
interface Plan {
  readonly id: number;
  readonly fate: Fate;
  readonly size: number;
  readonly cut: number;
}

/** The soak's size (see `ConformanceOptions.soak`). */
interface SoakSize {
  readonly connections: number;
  readonly concurrency: number;
  readonly maxSize: number;
  readonly seed: number;
}

/** A seeded generator of integers in [0, n) (mulberry32). */
function random(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

function plans({ connections, maxSize, seed }: SoakSize): Plan[] {
  const next = random(seed);
  return Array.from({ length: connections }, (_, id) => {
    const roll = next(100);
    const fate = roll < 60 ? Fate.Whole : roll < 75 ? Fate.HalfClose : roll < 90 ? Fate.ClientReset : Fate.ServerAbort;
    const size = 1 + next(maxSize);
    return { id, fate, size, cut: next(size + 1) };
  });
}

/** Whether `error` says the peer went away mid-connection. */
function peerGone(error: unknown): boolean {
  if (error instanceof EndOfFile) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ECONNRESET" || code === "EPIPE";
}

/** The server's handler of one connection: echoes the body (up to `cut` bytes for ServerAbort); records what it echoed. */
function* handle(client: Socket, echoed: Map<number, number>): Generator<B.Instruction, void, unknown> {
  const header = Buffer.alloc(HEADER);
  const buf = Buffer.allocUnsafe(16 * 1024);
  try {
    yield* readExactly(client, header);
    const fate = header[0] as Fate;
    const id = header.readUInt32BE(1);
    const limit = fate === Fate.ServerAbort ? header.readUInt32BE(5) : Number.POSITIVE_INFINITY;
    echoed.set(id, 0);
    let done = 0;
    for (let n: number; done < limit && (n = yield* read(client, buf, 0, Math.min(buf.length, limit - done))) > 0; ) {
      yield* write(client, buf, 0, n);
      done += n;
      echoed.set(id, done);
    }
  } catch (error) {
    if (!peerGone(error)) throw error;
  } finally {
    yield* close(client); // for ServerAbort, with the rest of the message unread: a reset
  }
}

/** What a client saw: the bytes that came back (compared as they came) and how the connection ended. */
interface Outcome {
  readonly plan: Plan;
  readonly received: number;
  readonly ended: "end" | "error";
}

/** Runs one connection of `plan` against `port`; rejects if a byte differs or it takes over 20 s. */
function connection(port: number, plan: Plan, seed: number): Promise<Outcome> {
  const body = pattern(seed + plan.id, plan.size);
  const header = Buffer.alloc(HEADER);
  header[0] = plan.fate;
  header.writeUInt32BE(plan.id, 1);
  header.writeUInt32BE(plan.cut, 5);
  return new Promise<Outcome>((resolve, reject) => {
    const c = net.connect({ host: LO4, port });
    let received = 0;
    let failure: Error | null = null;
    const what = `connection ${plan.id} (fate ${plan.fate}, ${plan.size} B, cut ${plan.cut}, seed ${seed})`;
    const timer = setTimeout(() => {
      failure = new Error(`${what}: no end after 20 s`);
      c.destroy();
    }, 20_000);
    c.on("data", (chunk: Buffer) => {
      if (failure === null && !chunk.equals(body.subarray(received, received + chunk.length))) {
        failure = new Error(`${what}: the echo differs from what was sent, from byte ${received} on`);
        c.destroy();
      }
      received += chunk.length;
      if (plan.fate === Fate.Whole && received === plan.size) c.end();
    });
    let ended: Outcome["ended"] = "end";
    c.on("error", () => {
      ended = "error";
    });
    c.on("close", () => {
      clearTimeout(timer);
      if (failure !== null) reject(failure);
      else resolve({ plan, received, ended });
    });
    c.on("connect", () => {
      c.write(header);
      // the body in pieces of random sizes, so that the server sees partial messages
      const sent = plan.fate === Fate.HalfClose || plan.fate === Fate.ClientReset ? plan.cut : plan.size;
      const step = 512 + ((plan.id * 7919) % 65536);
      for (let off = 0; off < sent; off += step) c.write(body.subarray(off, Math.min(sent, off + step)));
      if (plan.fate === Fate.HalfClose) c.end();
      else if (plan.fate === Fate.ClientReset) setTimeout(() => c.resetAndDestroy(), plan.id % 5);
    });
  });
}

/** Runs `plans` with at most `concurrency` connections at once. */
async function drive(port: number, all: Plan[], concurrency: number, seed: number): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < all.length) outcomes.push(await connection(port, all[next++]!, seed));
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, all.length) }, lane));
  return outcomes;
}

/** The process's open descriptors once the count stopped moving (closed sockets may take a turn of the loop). */
async function settledFds(): Promise<number | null> {
  let last = openFds();
  for (let i = 0; i < 50; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const now = openFds();
    if (now === last) return now;
    last = now;
  }
  return last;
}

/** @internal */
export function soakTests(suite: Suite): void {
  const o = suite.options.soak ?? {};
  const size: SoakSize = {
    connections: o.connections ?? 1000,
    concurrency: o.concurrency ?? 50,
    maxSize: o.maxSize ?? 256 * 1024,
    seed: o.seed ?? (Math.random() * 2 ** 31) | 0,
  };
  describe.skipIf(!suite.systemSockets)("soak", () => {
    it(`${size.connections} connections of up to ${size.maxSize} B, reset and half-closed mid-message: every surviving byte compared`, async () => {
      const all = plans(size);
      const fdsBefore = await settledFds();
      const echoed = new Map<number, number>();
      const outcomes = await suite.leakFree(function* () {
        const [server, port] = yield* loopbackListener({ backlog: 1024 });
        const failures: unknown[] = [];
        const acceptor = B.spawn(function* () {
          const handlers = B.orphans<void>();
          try {
            for (;;) {
              for (let t = B.care(handlers); t; t = B.care(handlers)) yield* B.awaitExn(t);
              const [client] = yield* accept(server);
              B.spawn({ orphans: handlers }, handle, client, echoed);
            }
          } finally {
            // cancelled once every client has gone: each handler ends at once
            for (const r of yield* withTimeout(20, B.drain(handlers))) if (!r.ok) failures.push(r.error);
            yield* close(server);
          }
        });
        const outcomes = yield* B.promise(() => drive(port, all, size.concurrency, size.seed));
        yield* B.cancel(acceptor);
        if (failures.length !== 0) throw failures[0];
        return outcomes;
      });
      const where = `(seed ${size.seed})`;
      expect(outcomes, where).toHaveLength(size.connections);
      for (const { plan, received, ended } of outcomes) {
        const what = `connection ${plan.id} (fate ${plan.fate}, ${plan.size} B, cut ${plan.cut}) ${where}`;
        const server = echoed.get(plan.id);
        switch (plan.fate) {
          case Fate.Whole:
            expect([received, ended, server], what).toEqual([plan.size, "end", plan.size]);
            break;
          case Fate.HalfClose:
            expect([received, ended, server], what).toEqual([plan.cut, "end", plan.cut]);
            break;
          case Fate.ClientReset:
            expect(server ?? 0, what).toBeLessThanOrEqual(plan.cut);
            break;
          case Fate.ServerAbort:
            expect(server, what).toBe(plan.cut);
            expect(received, what).toBeLessThanOrEqual(plan.cut);
            break;
        }
      }
      const fdsAfter = await settledFds();
      if (fdsBefore !== null) expect(fdsAfter, `open file descriptors ${where}`).toBeLessThanOrEqual(fdsBefore);
    }, 60_000);
  });
}
