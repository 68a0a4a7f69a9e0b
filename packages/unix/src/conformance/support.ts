/**
 * Helpers shared by the groups of the conformance suite: counting the
 * process's handles, deterministic payloads, expecting failures, and a
 * small echo server.
 */
import { readdirSync } from "node:fs";
import { networkInterfaces } from "node:os";
import * as B from "@bobbin/core";
import {
  accept,
  bindAndListen,
  close,
  connect,
  getsockname,
  type InetAddress,
  type ListenOptions,
  read,
  readExactly,
  type Socket,
  tcpv4,
  write,
} from "@bobbin/unix";
import { expect } from "vitest";

/** IPv4 loopback. */
export const LO4 = "127.0.0.1";
/** IPv6 loopback. */
export const LO6 = "::1";

/**
 * The process's active resources, counted by kind (`TCPWrap`, `Timeout`…).
 *
 * @example
 * ```ts
 * const before = activeHandles();
 * ```
 * @throws never.
 */
export function activeHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/**
 * The kinds of which `after` has more than `before` (the test runner's own
 * timers may come and go).
 *
 * @example
 * ```ts
 * expect(leaked(before, activeHandles())).toEqual({});
 * ```
 * @throws never.
 */
export function leaked(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const more: Record<string, number> = {};
  for (const [kind, n] of Object.entries(after)) if (n > (before[kind] ?? 0)) more[kind] = n - (before[kind] ?? 0);
  return more;
}

/** @internal How many file descriptors the process has open (Linux), or `null` where that cannot be read. */
export function openFds(): number | null {
  try {
    return readdirSync("/proc/self/fd").length;
  } catch {
    return null;
  }
}

/**
 * @internal The count of `openFds` once it holds still (two reads 20 ms
 * apart agree): descriptors an earlier test or run closes on Node's loop are
 * gone first. `null` where descriptors cannot be counted.
 */
export async function settledFds(): Promise<number | null> {
  let count = openFds();
  for (let i = 0; i < 50 && count !== null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const again = openFds();
    if (again === count) break;
    count = again;
  }
  return count;
}

/** @internal Waits (2 s at most) for the process to have `before` descriptors again, and says whether it has. */
export async function backToFds(before: number | null): Promise<boolean> {
  for (let i = 0; i < 100 && before !== null && openFds() !== before; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return before === null || openFds() === before;
}

/** @internal Whether this machine has the IPv6 loopback address. */
export function hasIpv6Loopback(): boolean {
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => i.family === "IPv6" && i.address === LO6));
}

/** @internal A deterministic pattern of bytes unique to `seed` (xorshift). */
export function pattern(seed: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    buf[i] = x & 0xff;
  }
  return buf;
}

/** @internal The error of a failed result (fails the test for a success). */
export function errorOf(r: B.Result<unknown>): NodeJS.ErrnoException {
  expect(r.ok, "the run was to fail").toBe(false);
  return (r as { error: NodeJS.ErrnoException }).error;
}

/** @internal `op` must throw; returns what it threw. */
export function* failure(op: () => B.Operation<unknown>): Generator<B.Instruction, NodeJS.ErrnoException, unknown> {
  try {
    yield* op();
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
  throw new Error("expected the operation to fail");
}

/** @internal `fn` must throw synchronously; returns what it threw. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a synchronous error");
}

/** @internal Echoes one connection until its end of stream, then closes it; returns the bytes echoed. */
export function* echoOnce(client: Socket, size = 4096): Generator<B.Instruction, number, unknown> {
  const buf = Buffer.allocUnsafe(size);
  let total = 0;
  try {
    for (let n: number; (n = yield* read(client, buf)) > 0; ) {
      yield* write(client, buf, 0, n);
      total += n;
    }
  } finally {
    yield* close(client);
  }
  return total;
}

/** @internal Accepts `count` clients and echoes each in its own task; returns the bytes echoed. */
export function* echoServer(server: Socket, count: number): Generator<B.Instruction, number, unknown> {
  const clients = B.orphans<number>();
  for (let i = 0; i < count; i++) {
    const [client] = yield* accept(server);
    B.spawn({ orphans: clients }, echoOnce, client, 4096);
  }
  let total = 0;
  for (const r of yield* B.drain(clients)) {
    if (!r.ok) throw r.error;
    total += r.value;
  }
  return total;
}

/** @internal Sends `data` through an echo connection and checks every byte that comes back. */
export function* roundTrip(sock: Socket, data: Buffer): Generator<B.Instruction, void, unknown> {
  const back = Buffer.alloc(data.length);
  const reader = B.spawn(function* () {
    yield* readExactly(sock, back);
  });
  yield* write(sock, data);
  yield* B.awaitExn(reader);
  expect(back.equals(data), "the bytes came back as they were sent").toBe(true);
}

/** @internal In a run: a TCP/IPv4 socket listening on loopback at a port the system picked, and that port. */
export function* loopbackListener(options?: ListenOptions): Generator<B.Instruction, [Socket, number], unknown> {
  const server = tcpv4();
  yield* bindAndListen(server, { host: LO4, port: 0 }, options);
  return [server, (getsockname(server) as InetAddress).port];
}

/**
 * In a run: a connected TCP pair on loopback, and the listener it came from
 * (`[ours, theirs, listener]`), for a backend's own tests beside the suite.
 *
 * @example
 * ```ts
 * const [sock, peer, server] = yield* connectedPair();
 * yield* write(sock, "ping");
 * ```
 * @throws what the backend's `bindAndListen`, `connect` or `accept` throws.
 */
export function* connectedPair(): Generator<B.Instruction, [Socket, Socket, Socket], unknown> {
  const [server, port] = yield* loopbackListener();
  const peer = B.spawn(function* () {
    return (yield* accept(server))[0];
  });
  const sock = tcpv4();
  yield* connect(sock, { host: LO4, port });
  return [sock, yield* B.awaitExn(peer), server];
}
