/**
 * The native and io_uring backends in worker domains: each domain makes its
 * own (its own epoll set or ring, in its own thread), and a listening socket
 * given to `B.parallel` is accepted on in every domain, each over a `dup` of
 * the descriptor. Workers run plain JavaScript, so these tests use the built
 * packages (`pnpm build` first: core, unix and this package's dist and addon).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as B from "@bobbin/core";
import { bindAndListen, close, getsockname, run, sleep, tcpv4, unixSocket } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
// The unix package's cross-domain tasks (the echo server…) and helpers, run here on both backends.
import * as U from "../../../unix/test/domains/fixtures/tasks.mjs";
import { client, openFds, serveEverywhere, warmUp } from "../../../unix/test/domains/support.js";
import { loadNative } from "../../dist/backend/index.js";
import { nativeBackend, uringBackend, uringSupport } from "../../dist/index.js";
import * as F from "./fixtures/tasks.mjs";

const LO = "127.0.0.1";

const sum = (a: number[]): number => a.reduce((x, y) => x + y, 0);

/** Why the native addon is unavailable here ("" where it loads). */
function noNative(): string {
  try {
    loadNative();
    return "";
  } catch (error) {
    return (error as Error).message;
  }
}

const backends = [
  { name: "native", backend: nativeBackend, skip: noNative() },
  { name: "uring", backend: uringBackend, skip: uringSupport().reason },
];

for (const { name, backend, skip } of backends)
  describe.skipIf(skip !== "")(`the ${name} backend across domains${skip === "" ? "" : ` (skipped: ${skip})`}`, () => {
    it(`each worker makes its own ${name} backend`, async () => {
      const out = await run(
        function* () {
          const all = yield* B.parallel(F.backendState, [[], []]);
          return all.map((r) => (r.ok ? r.value : r.error));
        },
        { backend, domains: 2 },
      );
      expect(out).toEqual([
        { domain: 1, backend: name, live: 0 },
        { domain: 2, backend: name, live: 0 },
      ]);
    });

    it("parallel echo: dom0 and 2 workers accept on one shared listener; 50 clients, every byte checked; nothing left", async () => {
      const fdsBefore = openFds();
      const clients = 50;
      const out = await run(
        function* () {
          const sock = tcpv4();
          yield* bindAndListen(sock, { host: LO, port: 0 });
          const addr = getsockname(sock);
          const { counts, local, remote } = serveEverywhere(sock, 2); // dom0 and 2 workers accept
          // Connections go to whichever domain's accept wins: warm up until both workers took one.
          yield* warmUp(addr, () => counts[1]! > 0 && counts[2]! > 0);
          const warm = [...counts];
          const load = Array.from({ length: clients }, (_, i) => B.spawn(client, addr, i));
          for (const t of load) yield* B.awaitExn(t);
          const total = [...counts];
          yield* B.cancel(remote); // the workers' finally blocks close their descriptors
          const workers: { live: number }[] = [];
          for (const pin of [1, 2]) workers.push(yield* B.awaitExn(B.call({ pin }, F.backendState)));
          yield* B.cancel(local);
          return { warm, total, workers: workers.map((w) => w.live), state: sock.state };
        },
        { backend, domains: 2 },
      );
      expect(sum(out.total) - sum(out.warm)).toBe(clients); // each client accepted once, by some domain
      expect(out.total.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
      expect(out.total[1]).toBeGreaterThan(0);
      expect(out.total[2]).toBeGreaterThan(0);
      expect(out.state).toBe("closed");
      expect(out.workers).toEqual([0, 0]);
      // The run is over: every socket, dup and epoll set (dom0's and the workers') is closed.
      if (fdsBefore !== null) expect(openFds()).toBe(fdsBefore);
    });

    it("a Unix listener crosses; an adopted copy never unlinks the socket's file, the domain that bound it does", async () => {
      const dir = mkdtempSync(join(tmpdir(), "bobbin-native-domains-"));
      const path = join(dir, "echo.sock");
      try {
        const out = await run(
          function* () {
            const sock = unixSocket();
            yield* bindAndListen(sock, { path });
            const counts = new Int32Array(new SharedArrayBuffer(4 * 2));
            const local = B.spawn(U.serve.body, { sock, counts });
            const remote = B.call(U.serve, { sock, counts });
            yield* warmUp({ path }, () => counts[1]! > 0);
            const load = Array.from({ length: 10 }, (_, i) => B.spawn(client, { path }, i, 3));
            for (const t of load) yield* B.awaitExn(t);
            yield* B.cancel(remote); // the worker closes its copy
            yield* sleep(0.05);
            const afterWorker = existsSync(path);
            yield* client({ path }, 99, 2); // dom0 still serves
            yield* B.cancel(local);
            return { counts: [...counts], afterWorker, afterOwner: existsSync(path) };
          },
          { backend, domains: 1 },
        );
        expect(out.counts[1]).toBeGreaterThan(0);
        expect(out.afterWorker).toBe(true);
        expect(out.afterOwner).toBe(false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("arrives as a listening socket of the worker's own backend, at the same address; closed if the owner closed first", async () => {
      const out = await run(
        function* () {
          const sock = tcpv4();
          yield* bindAndListen(sock, { host: LO, port: 0 });
          const seen = yield* B.awaitExn(B.call(U.inspect, sock));
          const mine = getsockname(sock);
          const late = B.call(U.inspect, sock);
          yield* close(sock); // before or while the worker adopts it: either way no fd is touched after close
          const after = yield* B.awaitExn(late);
          return { seen, mine, after };
        },
        { backend, domains: 1 },
      );
      expect(out.seen).toEqual({ domain: 1, state: "listening", kind: "tcp4", address: out.mine, ownBackend: true });
      expect(["listening", "closed"]).toContain(out.after.state);
    });
  });
