/**
 * The backend conformance suite: every backend of `@bobbin/unix` must pass
 * it. Call it from a vitest file of the backend's package:
 *
 * ```ts
 * import { conformance } from "../../unix/test/conformance/suite.js";
 * conformance("native-poll", nativePoll, { childBackend: { module: new URL("../src/index.ts", import.meta.url).href, export: "nativePoll" } });
 * ```
 *
 * Everything stays on loopback (127.0.0.1, ::1, Unix sockets in a temporary
 * directory); load tests are bounded in count and time; each test counts the
 * process's active handles before and after its run.
 */
import { spawn as spawnChild } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import * as net from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import * as B from "@bobbin/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Address,
  accept,
  type Backend,
  bindAndListen,
  close,
  connect,
  EndOfFile,
  getsockname,
  type InetAddress,
  read,
  readExactly,
  recvfrom,
  run,
  type Socket,
  SocketClosed,
  sendto,
  shutdown,
  sleep,
  Timeout,
  tcpv4,
  tcpv6,
  udpv4,
  udpv6,
  unixSocket,
  withTimeout,
  write,
} from "../../src/index.js";

/** Options of {@link conformance}. */
export interface ConformanceOptions {
  /**
   * Where a child process finds the backend factory (a module URL, `.ts`
   * allowed, and its export name), for the tests that need a process of
   * their own (fd exhaustion). Without it those tests are skipped.
   */
  readonly childBackend?: { readonly module: string; readonly export: string };
}

type Body<T> = () => Generator<B.Instruction, T, unknown>;

const LO4 = "127.0.0.1";
const LO6 = "::1";

/** The process's active resources, counted by kind. */
export function activeHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/** The kinds of which `after` has more than `before` (the test runner's own timers may come and go). */
export function leaked(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const more: Record<string, number> = {};
  for (const [kind, n] of Object.entries(after)) if (n > (before[kind] ?? 0)) more[kind] = n - (before[kind] ?? 0);
  return more;
}

function hasIpv6Loopback(): boolean {
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => i.family === "IPv6" && i.address === LO6));
}

/** A deterministic pattern unique to `seed`. */
function pattern(seed: number, length: number): Buffer {
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

function errorOf(r: B.Result<unknown>): NodeJS.ErrnoException {
  expect(r.ok).toBe(false);
  return (r as { error: NodeJS.ErrnoException }).error;
}

/** `op` must throw; returns what it threw. */
function* failure(op: () => B.Operation<unknown>): Generator<B.Instruction, NodeJS.ErrnoException, unknown> {
  try {
    yield* op();
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
  throw new Error("expected the operation to fail");
}

/** `fn` must throw synchronously; returns what it threw. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a synchronous error");
}

function* echoOnce(client: Socket, size = 4096): Generator<B.Instruction, number, unknown> {
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

/** Accepts `count` clients and echoes each in its own task; returns the bytes echoed. */
function* echoServer(server: Socket, count: number): Generator<B.Instruction, number, unknown> {
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

/** Sends `data` through an echo connection and checks every byte that comes back. */
function* roundTrip(sock: Socket, data: Buffer): Generator<B.Instruction, void, unknown> {
  const back = Buffer.alloc(data.length);
  const reader = B.spawn(function* () {
    yield* readExactly(sock, back);
  });
  yield* write(sock, data);
  yield* B.awaitExn(reader);
  expect(back.equals(data)).toBe(true);
}

/** A listener on a loopback port that never accepts (its thread is blocked), with a backlog of 1. */
async function stuckListener(): Promise<{ port: number; stop: () => Promise<void> }> {
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(
    `const net = require("node:net"); const { parentPort, workerData } = require("node:worker_threads");
     const s = net.createServer();
     s.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
       parentPort.postMessage(s.address().port);
       Atomics.wait(new Int32Array(workerData), 0, 0, 20000);
       s.close();
     });`,
    { eval: true, workerData: flag },
  );
  const port = await new Promise<number>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    port,
    stop: async () => {
      Atomics.store(new Int32Array(flag), 0, 1);
      Atomics.notify(new Int32Array(flag), 0);
      await worker.terminate();
    },
  };
}

/**
 * Defines the conformance tests of a backend. `backend` makes a fresh
 * backend for each run, as `run(main, { backend })` expects.
 */
export function conformance(name: string, backend: (domain: number) => Backend, options: ConformanceOptions = {}): void {
  const inRun = <T>(main: Body<T>): Promise<T> => run(main, { backend });

  /** Runs `main` and checks that the process has the same active handles afterwards. */
  const leakFree = async <T>(main: Body<T>): Promise<T> => {
    const before = activeHandles();
    const value = await inRun(main);
    expect(leaked(before, activeHandles())).toEqual({});
    return value;
  };

  describe(`backend conformance: ${name}`, () => {
    let dir = "";
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "bobbin-unix-"));
    });
    afterAll(() => {
      rmSync(dir, { recursive: true, force: true });
    });

    describe("echo", () => {
      it("TCP/IPv4: an echo server and a client that checks every byte", async () => {
        const total = await leakFree(function* () {
          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          const addr = getsockname(server) as InetAddress;
          expect(addr.host).toBe(LO4);
          expect(addr.port).toBeGreaterThan(0);
          const srv = B.spawn(echoServer, server, 1);
          const sock = tcpv4();
          yield* connect(sock, { host: LO4, port: addr.port });
          expect(sock.state).toBe("connected");
          for (let i = 1; i <= 20; i++) yield* roundTrip(sock, pattern(i, i * 997));
          yield* close(sock);
          expect(sock.state).toBe("closed");
          const echoed = yield* B.awaitExn(srv);
          yield* close(server);
          return echoed;
        });
        expect(total).toBe(Array.from({ length: 20 }, (_, i) => (i + 1) * 997).reduce((a, b) => a + b));
      });

      it.skipIf(!hasIpv6Loopback())("TCP/IPv6 echo on ::1", async () => {
        await leakFree(function* () {
          const server = tcpv6();
          yield* bindAndListen(server, { host: LO6, port: 0 });
          const { port } = getsockname(server) as InetAddress;
          const srv = B.spawn(echoServer, server, 1);
          const sock = tcpv6();
          yield* connect(sock, { host: LO6, port });
          yield* roundTrip(sock, pattern(6, 100_000));
          yield* close(sock);
          yield* B.awaitExn(srv);
          yield* close(server);
        });
      });

      it("Unix-socket echo in a temporary directory", async () => {
        const path = join(dir, "echo.sock");
        await leakFree(function* () {
          const server = unixSocket();
          yield* bindAndListen(server, { path });
          expect(getsockname(server)).toEqual({ path });
          const srv = B.spawn(echoServer, server, 2);
          for (let c = 0; c < 2; c++) {
            const sock = unixSocket();
            yield* connect(sock, { path });
            yield* roundTrip(sock, pattern(c, 50_000));
            yield* close(sock);
          }
          yield* B.awaitExn(srv);
          yield* close(server);
        });
      });

      it("UDP/IPv4 echo: recvfrom tells the sender, sendto answers it", async () => {
        await leakFree(function* () {
          const server = udpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          expect(server.state).toBe("bound");
          const { port } = getsockname(server) as InetAddress;
          const srv = B.spawn(function* () {
            const buf = Buffer.alloc(2048);
            for (let i = 0; i < 10; i++) {
              const [n, from] = yield* recvfrom(server, buf);
              yield* sendto(server, buf, 0, n, from);
            }
          });
          const sock = udpv4();
          const back = Buffer.alloc(2048);
          for (let i = 0; i < 10; i++) {
            const msg = pattern(i, 100 + i * 100);
            expect(yield* sendto(sock, msg, { host: LO4, port })).toBe(msg.length);
            const [n, from] = yield* withTimeout(5, recvfrom(sock, back));
            expect(from).toEqual({ host: LO4, port });
            expect(back.subarray(0, n).equals(msg)).toBe(true);
          }
          yield* B.awaitExn(srv);
          yield* close(sock);
          yield* close(server);
        });
      });

      it.skipIf(!hasIpv6Loopback())("UDP/IPv6 echo on ::1, datagrams truncated to the buffer", async () => {
        await leakFree(function* () {
          const server = udpv6();
          yield* bindAndListen(server, { host: LO6, port: 0 });
          const { port } = getsockname(server) as InetAddress;
          const sock = udpv6();
          yield* sendto(sock, pattern(1, 600), { host: LO6, port });
          const small = Buffer.alloc(100);
          const [n, from] = yield* withTimeout(5, recvfrom(server, small));
          expect(n).toBe(100);
          expect(small.equals(pattern(1, 600).subarray(0, 100))).toBe(true);
          yield* sendto(server, Buffer.from("pong"), from);
          const [m] = yield* withTimeout(5, recvfrom(sock, small));
          expect(small.subarray(0, m).toString()).toBe("pong");
          yield* close(sock);
          yield* close(server);
        });
      });

      it("1,000 concurrent clients, each verifying every byte", async () => {
        const CLIENTS = 1000;
        const SIZE = 2048;
        const started = performance.now();
        const echoed = await leakFree(function* () {
          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 }, { backlog: 1024 });
          const { port } = getsockname(server) as InetAddress;
          const srv = B.spawn(echoServer, server, CLIENTS);
          const clients: B.Task<void>[] = [];
          for (let c = 0; c < CLIENTS; c++) {
            clients.push(
              B.spawn(function* () {
                const sock = tcpv4();
                try {
                  yield* connect(sock, { host: LO4, port });
                  const data = pattern(c + 1, SIZE);
                  // in two writes, so servers see partial messages too
                  yield* write(sock, data, 0, SIZE / 2);
                  yield* write(sock, data, SIZE / 2);
                  const back = Buffer.alloc(SIZE);
                  yield* readExactly(sock, back);
                  if (!back.equals(data)) throw new Error(`client ${c}: echoed bytes differ`);
                } finally {
                  yield* close(sock);
                }
              }),
            );
          }
          for (const r of yield* B.awaitAll(clients)) if (!r.ok) throw r.error;
          const total = yield* B.awaitExn(srv);
          yield* close(server);
          return total;
        });
        expect(echoed).toBe(CLIENTS * SIZE);
        expect(performance.now() - started).toBeLessThan(15_000);
      });

      it("a write larger than the socket buffers completes, and the reader gets every byte", async () => {
        await leakFree(function* () {
          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          const { port } = getsockname(server) as InetAddress;
          const data = pattern(42, 8 * 1024 * 1024);
          const reader = B.spawn(function* () {
            const [client] = yield* accept(server);
            const back = Buffer.alloc(data.length);
            yield* readExactly(client, back);
            expect(yield* read(client, Buffer.alloc(1))).toBe(0);
            yield* close(client);
            return back.equals(data);
          });
          const sock = tcpv4();
          yield* connect(sock, { host: LO4, port });
          yield* write(sock, data);
          shutdown(sock, "send");
          expect(yield* B.awaitExn(reader)).toBe(true);
          yield* close(sock);
          yield* close(server);
        });
      });
    });

    describe("failures are errors of the task that met them", () => {
      it("connect to a closed port: ECONNREFUSED, and the socket is fresh again", async () => {
        await leakFree(function* () {
          const probe = tcpv4();
          yield* bindAndListen(probe, { host: LO4, port: 0 });
          const { port } = getsockname(probe) as InetAddress;
          yield* close(probe);
          const sock = tcpv4();
          const error = yield* failure(() => connect(sock, { host: LO4, port }));
          expect(error.code).toBe("ECONNREFUSED");
          expect(sock.state).toBe("fresh");
          // the same socket can try again
          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          const again = (getsockname(server) as InetAddress).port;
          const srv = B.spawn(echoServer, server, 1);
          yield* connect(sock, { host: LO4, port: again });
          yield* roundTrip(sock, pattern(3, 10));
          yield* close(sock);
          yield* B.awaitExn(srv);
          yield* close(server);
        });
      });

      it("connect to a missing Unix socket: ENOENT", async () => {
        await leakFree(function* () {
          const sock = unixSocket();
          const error = yield* failure(() => connect(sock, { path: join(dir, "missing.sock") }));
          expect(error.code).toBe("ENOENT");
          yield* close(sock);
        });
      });

      it("binding an address in use: EADDRINUSE, and the socket can bind elsewhere", async () => {
        await leakFree(function* () {
          const a = tcpv4();
          yield* bindAndListen(a, { host: LO4, port: 0 });
          const { port } = getsockname(a) as InetAddress;
          const b = tcpv4();
          const error = yield* failure(() => bindAndListen(b, { host: LO4, port }));
          expect(error.code).toBe("EADDRINUSE");
          expect(b.state).toBe("fresh");
          yield* bindAndListen(b, { host: LO4, port: 0 });
          expect(b.state).toBe("listening");
          yield* close(a);
          yield* close(b);
        });
      });

      it("end of stream: read returns 0 (again and again), readExactly throws EndOfFile", async () => {
        await leakFree(function* () {
          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          const { port } = getsockname(server) as InetAddress;
          const peer = B.spawn(function* () {
            const [client] = yield* accept(server);
            yield* write(client, "abc");
            yield* close(client);
          });
          const sock = tcpv4();
          yield* connect(sock, { host: LO4, port });
          const buf = Buffer.alloc(10);
          const error = (yield* failure(() => readExactly(sock, buf))) as unknown as EndOfFile;
          expect(error).toBeInstanceOf(EndOfFile);
          expect(error.read).toBe(3);
          expect(error.wanted).toBe(10);
          expect(buf.subarray(0, 3).toString()).toBe("abc");
          expect(yield* read(sock, buf)).toBe(0);
          expect(yield* read(sock, buf)).toBe(0);
          yield* B.awaitExn(peer);
          yield* close(sock);
          yield* close(server);
        });
      });

      it("reset by peer fails the reading task only; the server goes on", async () => {
        await leakFree(function* () {
          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          const { port } = getsockname(server) as InetAddress;
          const results = B.spawn(function* () {
            const handlers: B.Task<number>[] = [];
            for (let i = 0; i < 2; i++) {
              const [client] = yield* accept(server);
              handlers.push(B.spawn(echoOnce, client, 4096));
            }
            return yield* B.awaitAll(handlers);
          });
          // a plain Node client that resets its connection after sending
          const rude = yield* B.promise(
            () =>
              new Promise<void>((resolve, reject) => {
                const c = net.connect({ host: LO4, port }, () => {
                  c.write("x");
                  setTimeout(() => c.resetAndDestroy(), 20);
                });
                c.on("error", reject);
                c.on("close", () => resolve()); // its handle is gone
              }),
          );
          void rude;
          const sock = tcpv4();
          yield* connect(sock, { host: LO4, port });
          yield* roundTrip(sock, pattern(8, 1000));
          yield* close(sock);
          const [first, second] = yield* B.awaitExn(results);
          const codes = [first!, second!].map((r) => (r.ok ? "ok" : (r.error as NodeJS.ErrnoException).code));
          expect(codes.sort()).toEqual(["ECONNRESET", "ok"]);
          yield* close(server);
        });
      });

      it("broken pipe fails the writing task only", async () => {
        await leakFree(function* () {
          // a plain Node server that closes every connection at once
          const rude = net.createServer((c) => c.destroy());
          const port = yield* B.promise(
            () => new Promise<number>((resolve) => rude.listen(0, LO4, () => resolve((rude.address() as net.AddressInfo).port))),
          );
          try {
            const writer = B.spawn(function* () {
              const sock = tcpv4();
              try {
                yield* connect(sock, { host: LO4, port });
                for (let i = 0; i < 1000; i++) {
                  yield* write(sock, pattern(i, 1024));
                  yield* sleep(0.002);
                }
              } finally {
                yield* close(sock);
              }
            });
            const bystander = B.spawn(function* () {
              yield* sleep(0.05);
              return "still here";
            });
            const error = errorOf(yield* B.awaitTask(writer));
            expect(["EPIPE", "ECONNRESET"]).toContain(error.code);
            expect(yield* B.awaitExn(bystander)).toBe("still here");
          } finally {
            // (a net.Server's "close" comes before its handle is gone: give the loop two turns)
            yield* B.promise(() => new Promise<void>((resolve) => rude.close(() => setImmediate(() => setImmediate(resolve)))));
          }
        });
      });

      it("misuse gives typed errors in the task, and the run goes on", async () => {
        await leakFree(function* () {
          const udp = udpv4();
          const buf = Buffer.alloc(16);
          expect(thrown(() => read(udp, buf))).toBeInstanceOf(TypeError);
          expect(thrown(() => write(udp, buf))).toBeInstanceOf(TypeError);
          expect(thrown(() => accept(udp))).toBeInstanceOf(TypeError);
          expect(thrown(() => connect(udp, { host: LO4, port: 1 }))).toBeInstanceOf(TypeError);
          expect(thrown(() => recvfrom(udp, buf))).toBeInstanceOf(TypeError); // not bound yet
          const tcp = tcpv4();
          expect(thrown(() => recvfrom(tcp, buf))).toBeInstanceOf(TypeError);
          expect(thrown(() => sendto(tcp, buf, { host: LO4, port: 9 }))).toBeInstanceOf(TypeError);
          expect(thrown(() => read(tcp, buf))).toBeInstanceOf(TypeError); // not connected
          expect(thrown(() => accept(tcp))).toBeInstanceOf(TypeError); // not listening
          expect(thrown(() => bindAndListen(tcp, { path: "/tmp/x" } as unknown as Address))).toBeInstanceOf(TypeError);
          expect(thrown(() => bindAndListen(tcp, { host: LO4, port: 70000 }))).toBeInstanceOf(RangeError);
          expect((thrown(() => connect(tcp, { host: LO6, port: 80 })) as NodeJS.ErrnoException).code).toBe("EAFNOSUPPORT");
          expect(thrown(() => sleep(-1))).toBeInstanceOf(RangeError);
          expect(thrown(() => read(undefined as unknown as Socket, buf))).toBeInstanceOf(TypeError);

          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          expect(thrown(() => bindAndListen(server, { host: LO4, port: 0 }))).toBeInstanceOf(TypeError);
          expect(thrown(() => connect(server, { host: LO4, port: 1 }))).toBeInstanceOf(TypeError);
          const { port } = getsockname(server) as InetAddress;
          const srv = B.spawn(echoServer, server, 1);
          const sock = tcpv4();
          yield* connect(sock, { host: LO4, port });
          expect((thrown(() => connect(sock, { host: LO4, port })) as NodeJS.ErrnoException).code).toBe("EISCONN");
          expect(thrown(() => read(sock, buf, -1))).toBeInstanceOf(RangeError);
          expect(thrown(() => read(sock, buf, 0, -5))).toBeInstanceOf(RangeError);
          expect(thrown(() => write(sock, buf, 10, 10))).toBeInstanceOf(RangeError);
          expect(thrown(() => read(sock, buf, 1.5))).toBeInstanceOf(RangeError);
          expect(thrown(() => read(sock, "text" as unknown as Buffer))).toBeInstanceOf(TypeError);
          expect(yield* read(sock, buf, 0, 0)).toBe(0);
          yield* roundTrip(sock, pattern(1, 16));
          yield* close(sock);
          expect(thrown(() => write(sock, buf))).toBeInstanceOf(SocketClosed);
          expect(thrown(() => read(sock, buf))).toBeInstanceOf(SocketClosed);
          yield* close(sock); // closing twice is fine
          yield* B.awaitExn(srv);
          yield* close(server);
          yield* close(tcp);
          yield* close(udp);
        });
      });

      it("closing a socket wakes the tasks blocked on it with SocketClosed", async () => {
        await leakFree(function* () {
          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          const acceptor = B.spawn(function* () {
            yield* accept(server);
          });
          yield* sleep(0.01);
          yield* close(server);
          expect(errorOf(yield* B.awaitTask(acceptor))).toBeInstanceOf(SocketClosed);
        });
      });
    });

    describe("cancellation and timeouts", () => {
      it("a read cancelled by a timeout throws Timeout and loses no data", async () => {
        await leakFree(function* () {
          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          const { port } = getsockname(server) as InetAddress;
          const go = new B.Trigger();
          const peer = B.spawn(function* () {
            const [client] = yield* accept(server);
            yield* go.wait();
            yield* write(client, "late");
            yield* close(client);
          });
          const sock = tcpv4();
          yield* connect(sock, { host: LO4, port });
          const buf = Buffer.alloc(10);
          const t0 = performance.now();
          const error = yield* failure(() => withTimeout(0.05, read(sock, buf)));
          expect(error).toBeInstanceOf(Timeout);
          expect(performance.now() - t0).toBeGreaterThanOrEqual(49);
          go.signal();
          const n = yield* withTimeout(5, read(sock, buf));
          expect(buf.subarray(0, n).toString()).toBe("late");
          yield* B.awaitExn(peer);
          yield* close(sock);
          yield* close(server);
        });
      });

      it("a connect cancelled by a timeout throws Timeout; closing the socket leaves nothing behind", async () => {
        const stuck = await stuckListener();
        try {
          await leakFree(function* () {
            const socks: Socket[] = [];
            let timedOut = 0;
            // the listener's queue holds two connections; the next connect hangs
            for (let i = 0; i < 6 && timedOut === 0; i++) {
              const sock = tcpv4();
              socks.push(sock);
              try {
                yield* withTimeout(0.3, connect(sock, { host: LO4, port: stuck.port }));
              } catch (error) {
                expect(error).toBeInstanceOf(Timeout);
                expect(sock.state).toBe("connecting");
                timedOut++;
              }
            }
            expect(timedOut).toBe(1);
            for (const s of socks) yield* close(s);
          });
        } finally {
          await stuck.stop();
        }
      });

      it("cancelling a task blocked in accept, read or write leaves no handle behind", async () => {
        await leakFree(function* () {
          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          const { port } = getsockname(server) as InetAddress;
          // blocked in accept
          const acceptor = B.spawn(function* () {
            const other = tcpv4();
            try {
              yield* bindAndListen(other, { host: LO4, port: 0 });
              yield* accept(other);
            } finally {
              yield* close(other);
            }
          });
          // a peer that never reads nor writes
          const [peerTask, sock] = [
            B.spawn(function* () {
              const [client] = yield* accept(server);
              return client;
            }),
            tcpv4(),
          ];
          yield* connect(sock, { host: LO4, port });
          const silent = yield* B.awaitExn(peerTask);
          // blocked in read
          const reader = B.spawn(function* () {
            yield* read(sock, Buffer.alloc(100));
          });
          // blocked in write: far more than the kernel buffers take
          const writer = B.spawn(function* () {
            const other = tcpv4();
            try {
              yield* connect(other, { host: LO4, port });
              yield* write(other, Buffer.alloc(64 * 1024 * 1024));
            } finally {
              yield* close(other);
            }
          });
          const writePeer = yield* accept(server);
          yield* sleep(0.1);
          expect(acceptor.status).toBe("pending");
          expect(reader.status).toBe("pending");
          expect(writer.status).toBe("pending");
          yield* B.cancel(acceptor);
          yield* B.cancel(reader);
          yield* B.cancel(writer);
          // the socket a cancelled reader waited on still works
          const back = B.spawn(function* () {
            const buf = Buffer.alloc(5);
            yield* readExactly(sock, buf);
            return buf.toString();
          });
          yield* write(silent, "hello");
          expect(yield* B.awaitExn(back)).toBe("hello");
          yield* close(writePeer[0]);
          yield* close(silent);
          yield* close(sock);
          yield* close(server);
        });
      });

      it("nested timeouts: an inner timeout that cannot fire first is not armed", async () => {
        await leakFree(function* () {
          const t0 = performance.now();
          const outer = yield* failure(() => withTimeout(0.05, withTimeout(10, sleep(5))));
          expect(outer).toBeInstanceOf(Timeout);
          expect((outer as unknown as Timeout).seconds).toBe(0.05);
          const inner = yield* failure(() => withTimeout(10, withTimeout(0.03, sleep(5))));
          expect((inner as unknown as Timeout).seconds).toBe(0.03);
          expect(performance.now() - t0).toBeLessThan(3000);
          // an operation that finishes in time returns its value
          expect(
            yield* withTimeout(1, function* () {
              yield* sleep(0.01);
              return 7;
            }),
          ).toBe(7);
        });
      });

      it("sleepers run concurrently; a cancelled sleeper leaves no timer behind", async () => {
        await leakFree(function* () {
          const t0 = performance.now();
          const a = B.spawn(function* () {
            yield* sleep(0.1);
          });
          const b = B.spawn(function* () {
            yield* sleep(0.2);
          });
          yield* B.awaitAll([a, b]);
          const elapsed = performance.now() - t0;
          expect(elapsed).toBeGreaterThanOrEqual(199);
          expect(elapsed).toBeLessThan(290 + 1000);
          const timersBefore = activeHandles().Timeout ?? 0;
          const long = B.spawn(function* () {
            yield* sleep(3600);
          });
          yield* sleep(0.01);
          expect(activeHandles().Timeout ?? 0).toBeGreaterThan(timersBefore);
          yield* B.cancel(long);
          expect(activeHandles().Timeout ?? 0).toBe(timersBefore);
          // many sleepers share one timer
          const many = Array.from({ length: 1000 }, (_, i) =>
            B.spawn(function* () {
              yield* sleep(0.02 + (i % 10) / 1000);
            }),
          );
          yield* sleep(0.005);
          expect((activeHandles().Timeout ?? 0) - timersBefore).toBeLessThanOrEqual(1);
          yield* B.awaitAll(many);
        });
      });
    });

    describe("the end of a run", () => {
      it("after run the process has no active handles left, even for sockets left open", async () => {
        await leakFree(function* () {
          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          const { port } = getsockname(server) as InetAddress;
          const sock = tcpv4();
          yield* connect(sock, { host: LO4, port });
          const [client] = yield* accept(server);
          const udp = udpv4();
          yield* sendto(udp, Buffer.from("x"), { host: LO4, port: 9 });
          const path = join(dir, "left-open.sock");
          const unix = unixSocket();
          yield* bindAndListen(unix, { path });
          void client;
          // none of them closed: run closes them and waits for their handles
        });
      });

      it("a run whose main fails still closes everything", async () => {
        const before = activeHandles();
        await expect(
          inRun(function* () {
            const server = tcpv4();
            yield* bindAndListen(server, { host: LO4, port: 0 });
            B.spawn(function* () {
              yield* accept(server);
            });
            yield* sleep(0.01);
            throw new Error("boom");
          }),
        ).rejects.toThrow("boom");
        expect(leaked(before, activeHandles())).toEqual({});
      });
    });

    describe.skipIf(options.childBackend === undefined)("file descriptor exhaustion", () => {
      it("accept under fd exhaustion (ulimit -n in a child process) keeps the server alive", async () => {
        const child = options.childBackend!;
        const script = fileURLToPath(new URL("./emfile-child.ts", import.meta.url));
        const register = fileURLToPath(new URL("./register.mjs", import.meta.url));
        const limit = 48;
        const proc = spawnChild(
          "sh",
          [
            "-c",
            `ulimit -n ${limit} && exec "$0" --import "$1" "$2" "$3" "$4"`,
            process.execPath,
            register,
            script,
            child.module,
            child.export,
          ],
          {
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        let stderr = "";
        proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        const lines: string[] = [];
        const waiters: [string, (line: string) => void][] = [];
        let emfileSeen = false;
        createInterface({ input: proc.stdout }).on("line", (line) => {
          if (line === "EMFILE") emfileSeen = true;
          const i = waiters.findIndex(([prefix]) => line.startsWith(prefix));
          if (i >= 0) waiters.splice(i, 1)[0]![1](line);
          else lines.push(line);
        });
        const exited = new Promise<number | null>((resolve) => proc.on("exit", resolve));
        const next = (prefix: string, ms = 10_000): Promise<string> =>
          new Promise((resolve, reject) => {
            const j = lines.findIndex((l) => l.startsWith(prefix));
            if (j >= 0) return resolve(lines.splice(j, 1)[0]!);
            const timer = setTimeout(() => reject(new Error(`no ${prefix} from the child; stderr: ${stderr}`)), ms);
            waiters.push([
              prefix,
              (l) => {
                clearTimeout(timer);
                resolve(l);
              },
            ]);
          });
        try {
          const port = Number((await next("PORT", 20_000)).split(" ")[1]);
          // more connections than the child has descriptors left
          const conns: net.Socket[] = [];
          let closedByServer = 0;
          for (let i = 0; i < limit; i++) {
            const c = net.connect({ host: LO4, port });
            c.on("error", () => {});
            c.resume(); // so that the server's FIN is seen
            c.on("close", () => {
              if (!c.destroyed || c.readableEnded || c.errored) closedByServer++;
            });
            conns.push(c);
          }
          // The backend either reports EMFILE to accept (the server retries) or,
          // as libuv does, accepts and closes what it cannot keep: either way
          // the excess clients are not served, and the server stays up.
          const deadline = performance.now() + 5000;
          while (closedByServer === 0 && !emfileSeen && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          expect(closedByServer > 0 || emfileSeen).toBe(true);
          for (const c of conns) c.destroy();
          // the server recovers once descriptors are free again: a new client is served
          let echoed = "";
          for (let attempt = 0; attempt < 50 && echoed !== "ping"; attempt++) {
            await new Promise((r) => setTimeout(r, 50));
            echoed = await new Promise<string>((resolve) => {
              const c = net.connect({ host: LO4, port }, () => c.write("ping"));
              let got = "";
              c.on("data", (d) => {
                got += d.toString();
                if (got.length >= 4) c.destroy();
              });
              c.on("error", () => resolve(""));
              c.on("close", () => resolve(got));
              setTimeout(() => c.destroy(), 1000);
            });
          }
          expect(echoed).toBe("ping");
          proc.kill("SIGTERM");
          const done = (await next("DONE")).split(" ").map(Number);
          expect(done[1]).toBeGreaterThan(0); // clients accepted
          expect(await exited).toBe(0);
        } finally {
          if (proc.exitCode === null) proc.kill("SIGKILL");
        }
      });
    });

    describe("sharing a listening socket across domains (share/adopt, when the backend has them)", () => {
      const sharing = (): Promise<boolean> =>
        inRun(function* () {
          return typeof (B.Domain.events() as Backend).share === "function";
        });

      it("an adopted listener has a descriptor of its own: it accepts after the original closed", async (ctx) => {
        if (!(await sharing())) return ctx.skip();
        await leakFree(function* () {
          const b = B.Domain.events() as Backend;
          const original = tcpv4();
          yield* bindAndListen(original, { host: LO4, port: 0 });
          const addr = getsockname(original) as InetAddress;
          const shared = b.share!(original);
          expect(shared).toMatchObject({ kind: "tcp4", address: addr });
          expect(shared.guard).toBeInstanceOf(SharedArrayBuffer);
          const copy = b.adopt!(shared);
          expect(copy.state).toBe("listening");
          expect(copy.backend).toBe(b);
          expect(getsockname(copy)).toEqual(addr);
          yield* close(original); // closes the original's descriptor only
          const srv = B.spawn(echoServer, copy, 1);
          const sock = tcpv4();
          yield* connect(sock, addr);
          yield* roundTrip(sock, pattern(42, 10_000));
          yield* close(sock);
          yield* B.awaitExn(srv);
          yield* close(copy);
        });
      });

      it("closing an adopted listener right away, and adopting after the owner closed (it arrives closed), leave nothing", async (ctx) => {
        if (!(await sharing())) return ctx.skip();
        await leakFree(function* () {
          const b = B.Domain.events() as Backend;
          const original = tcpv4();
          yield* bindAndListen(original, { host: LO4, port: 0 });
          yield* close(b.adopt!(b.share!(original)));
          const shared = b.share!(original);
          yield* close(original);
          const late = b.adopt!(shared);
          expect(late.state).toBe("closed");
          expect(yield* failure(() => accept(late))).toBeInstanceOf(SocketClosed);
          yield* close(late);
        });
      });
    });
  });
}
