/**
 * A listening socket crosses domains so that every domain accepts on it (the
 * book's parallel echo server). Workers run plain JavaScript, so these tests
 * use the built packages (`pnpm build` in core, sync and here first; turbo
 * does it before `test`) and the tasks in `fixtures/`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { accept, bindAndListen, close, connect, getsockname, run, SocketClosed, sleep, tcpv4, unixSocket } from "../../dist/index.js";
import * as F from "./fixtures/tasks.mjs";
import { client, openFds, serveEverywhere, warmUp } from "./support.js";

const LO = "127.0.0.1";

/** The kinds of which `after` has more than `before` (the test runner's own pipes and timers come and go). */
function more(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [kind, n] of Object.entries(after)) if (n > (before[kind] ?? 0)) out[kind] = n - (before[kind] ?? 0);
  return out;
}

const served = (counts: Int32Array): number[] => [...counts].map((n, d) => (n > 0 ? d : -1)).filter((d) => d >= 0);

describe("a listening socket shared by every domain (the book's parallel echo server)", () => {
  it("dom0 listens; dom0 and each worker accept; 50 clients, every byte checked; cancelling leaves no handle or fd", async () => {
    const fdsBefore = openFds();
    const handlesBefore = F.ioHandles();
    const clients = 50;
    const out = await run(
      function* () {
        const sock = tcpv4();
        yield* bindAndListen(sock, { host: LO, port: 0 });
        const addr = getsockname(sock);
        const { counts, local, remote } = serveEverywhere(sock, 2);
        yield* warmUp(addr, () => counts[1]! > 0 && counts[2]! > 0);
        const warm = [...counts];
        const load = Array.from({ length: clients }, (_, i) => B.spawn(client, addr, i));
        for (const t of load) yield* B.awaitExn(t);
        const total = [...counts];
        yield* B.cancel(remote);
        yield* B.cancel(local); // its finally closes dom0's socket
        const workers: Record<string, number>[] = [];
        for (const pin of [1, 2]) workers.push((yield* B.awaitExn(B.call({ pin }, F.handles))).handles);
        return { warm, total, workers, state: sock.state };
      },
      { domains: 2 },
    );
    const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
    // Every client was accepted once, by some domain; more than one domain served.
    expect(sum(out.total) - sum(out.warm)).toBe(clients);
    expect(served(new Int32Array(out.total)).length).toBeGreaterThanOrEqual(2);
    expect(out.state).toBe("closed");
    // Cancelling the accept loops closed every socket, relay and timer in the workers…
    expect(out.workers).toEqual([{}, {}]);
    // …and in dom0 once the run is over; no descriptor is left open.
    expect(more(handlesBefore, F.ioHandles())).toEqual({});
    if (fdsBefore !== null) expect(openFds()).toBe(fdsBefore);
  });

  it("dom0 can hand the socket over: once the workers accept, closing dom0's closes only its own descriptor", async () => {
    const out = await run(
      function* () {
        const sock = tcpv4();
        yield* bindAndListen(sock, { host: LO, port: 0 });
        const addr = getsockname(sock);
        const { counts, local, remote } = serveEverywhere(sock, 2);
        yield* warmUp(addr, () => counts[1]! > 0 && counts[2]! > 0);
        yield* B.cancel(local); // dom0 stops serving: its descriptor is closed
        const before = [...counts];
        const load = Array.from({ length: 20 }, (_, i) => B.spawn(client, addr, i, 3));
        for (const t of load) yield* B.awaitExn(t);
        const after = [...counts];
        yield* B.cancel(remote);
        return { before, after, state: sock.state };
      },
      { domains: 2 },
    );
    expect(out.state).toBe("closed");
    expect(out.after[0]).toBe(out.before[0]); // dom0 took no connection after closing
    expect(out.after[1]! + out.after[2]! - out.before[1]! - out.before[2]!).toBe(20);
  });

  it("a Unix-domain listener crosses too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bobbin-domains-"));
    try {
      const out = await run(
        function* () {
          const sock = unixSocket();
          yield* bindAndListen(sock, { path: join(dir, "echo.sock") });
          const addr = getsockname(sock);
          const counts = new Int32Array(new SharedArrayBuffer(4 * 2));
          const local = B.spawn(F.serve.body, { sock, counts });
          const remote = B.call(F.serve, { sock, counts });
          yield* warmUp(addr, () => counts[1]! > 0);
          const load = Array.from({ length: 10 }, (_, i) => B.spawn(client, addr, i, 3));
          for (const t of load) yield* B.awaitExn(t);
          yield* B.cancel(remote);
          yield* B.cancel(local);
          return [...counts];
        },
        { domains: 1 },
      );
      expect(out[1]).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a worker that holds the socket without accepting takes no connection", async () => {
    const out = await run(
      function* () {
        const sock = tcpv4();
        yield* bindAndListen(sock, { host: LO, port: 0 });
        const addr = getsockname(sock);
        const counts = new Int32Array(new SharedArrayBuffer(4 * 2));
        const holder = B.call(F.holdWithoutAccepting, { sock, seconds: 0.6 });
        const local = B.spawn(F.serve.body, { sock, counts });
        yield* sleep(0.3); // the worker has its own descriptor by now
        const load = Array.from({ length: 20 }, (_, i) => B.spawn(client, addr, i, 2));
        for (const t of load) yield* B.awaitExn(t);
        const where = yield* B.awaitExn(holder);
        yield* B.cancel(local);
        return { counts: [...counts], where };
      },
      { domains: 1 },
    );
    expect(out.where).toBe(1);
    expect(out.counts).toEqual([20, 0]);
  });
});

describe("what crosses, and how", () => {
  it("arrives as a listening socket of the worker's backend, at the same address", async () => {
    const out = await run(
      function* () {
        const sock = tcpv4();
        yield* bindAndListen(sock, { host: LO, port: 0 });
        const seen = yield* B.awaitExn(B.call(F.inspect, sock));
        const mine = getsockname(sock);
        yield* close(sock);
        return { seen, mine };
      },
      { domains: 1 },
    );
    expect(out.seen).toEqual({ domain: 1, state: "listening", kind: "tcp4", address: out.mine, ownBackend: true });
  });

  it("is one object per domain: twice in one call, and back home as the very same socket", async () => {
    await run(
      function* () {
        const sock = tcpv4();
        yield* bindAndListen(sock, { host: LO, port: 0 });
        expect(yield* B.awaitExn(B.call(F.sameHere, { a: sock, b: sock }))).toBe(true);
        expect(yield* B.awaitExn(B.call(F.giveBack, sock))).toBe(sock);
        yield* close(sock);
      },
      { domains: 1 },
    );
  });

  it("a connected socket cannot cross: a TypeError in the caller, before anything is sent", async () => {
    await run(
      function* () {
        const server = tcpv4();
        yield* bindAndListen(server, { host: LO, port: 0 });
        const c = tcpv4();
        const acceptor = B.spawn(function* () {
          return (yield* accept(server))[0];
        });
        yield* connect(c, getsockname(server));
        const peer = yield* B.awaitExn(acceptor);
        let error: unknown = null;
        try {
          B.call(F.inspect, peer);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(TypeError);
        expect((error as Error).message).toMatch(/only listening stream sockets can be given to another domain/);
        const viaParallel = yield* (function* () {
          try {
            yield* B.parallel(F.inspect, [c]);
          } catch (e) {
            return e;
          }
          return null;
        })();
        expect(viaParallel).toBeInstanceOf(TypeError);
        const fresh = tcpv4();
        expect(() => B.call(F.inspect, fresh)).toThrow(/fresh tcp4 socket/);
        yield* close(fresh);
        yield* close(peer);
        yield* close(c);
        yield* close(server);
        expect(() => B.call(F.inspect, server)).toThrow(SocketClosed);
      },
      { domains: 1 },
    );
  });

  it("a socket the owner closed before the worker took it arrives closed (its descriptor is never touched)", async () => {
    const out = await run(
      function* () {
        const sock = tcpv4();
        yield* bindAndListen(sock, { host: LO, port: 0 });
        const busy = B.call(F.spin, 200); // the worker is busy: the next call waits in its queue
        const seen = B.call(F.inspect, sock);
        yield* close(sock);
        yield* B.awaitExn(busy);
        return yield* B.awaitExn(seen);
      },
      { domains: 1, workSharing: false },
    );
    expect(out).toMatchObject({ domain: 1, state: "closed", address: null });
  });
});
