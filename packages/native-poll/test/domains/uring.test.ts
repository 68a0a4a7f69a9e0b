/**
 * The io_uring backend in worker domains: each domain makes its own (its own
 * ring, in its own thread), a listening socket given to `B.parallel` is
 * accepted on in every domain, each with a multishot accept on its own `dup`
 * of the descriptor, and the workers' rings close with their domains. Uses
 * the built packages (`pnpm build` first), as workers do.
 */
import * as B from "@bobbin/core";
import { bindAndListen, getsockname, run, tcpv4 } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import * as U from "../../../unix/test/domains/fixtures/tasks.mjs";
import { client, openFds, serveEverywhere, warmUp } from "../../../unix/test/domains/support.js";
import { uringBackend, uringSupport } from "../../dist/index.js";
import * as F from "./fixtures/tasks.mjs";

const LO = "127.0.0.1";
const support = uringSupport();

const sum = (a: number[]): number => a.reduce((x, y) => x + y, 0);

describe.skipIf(!support.available)(
  `the io_uring backend across domains${support.available ? "" : ` (skipped: ${support.reason})`}`,
  () => {
    it("each worker makes its own io_uring backend", async () => {
      const out = await run(
        function* () {
          const all = yield* B.parallel(F.backendState, [[], []]);
          return all.map((r) => (r.ok ? r.value : r.error));
        },
        { backend: uringBackend, domains: 2 },
      );
      expect(out).toEqual([
        { domain: 1, backend: "uring", live: 0 },
        { domain: 2, backend: "uring", live: 0 },
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
          const { counts, local, remote } = serveEverywhere(sock, 2);
          yield* warmUp(addr, () => counts[1]! > 0 && counts[2]! > 0);
          const warm = [...counts];
          const load = Array.from({ length: clients }, (_, i) => B.spawn(client, addr, i));
          for (const t of load) yield* B.awaitExn(t);
          const total = [...counts];
          yield* B.cancel(remote);
          const workers: { live: number }[] = [];
          for (const pin of [1, 2]) workers.push(yield* B.awaitExn(B.call({ pin }, F.backendState)));
          yield* B.cancel(local);
          return { warm, total, workers: workers.map((w) => w.live), state: sock.state };
        },
        { backend: uringBackend, domains: 2 },
      );
      expect(sum(out.total) - sum(out.warm)).toBe(clients);
      expect(out.total[1]).toBeGreaterThan(0);
      expect(out.total[2]).toBeGreaterThan(0);
      expect(out.state).toBe("closed");
      expect(out.workers).toEqual([0, 0]);
      // Every socket, dup, ring and eventfd (dom0's and the workers') is closed.
      if (fdsBefore !== null) expect(openFds()).toBe(fdsBefore);
    });

    it("arrives as a listening socket of the worker's own backend", async () => {
      const out = await run(
        function* () {
          const sock = tcpv4();
          yield* bindAndListen(sock, { host: LO, port: 0 });
          return { seen: yield* B.awaitExn(B.call(U.inspect, sock)), mine: getsockname(sock) };
        },
        { backend: uringBackend, domains: 1 },
      );
      expect(out.seen).toEqual({ domain: 1, state: "listening", kind: "tcp4", address: out.mine, ownBackend: true });
    });
  },
);
