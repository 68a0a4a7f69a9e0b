/**
 * `@bobbin/unix` in worker domains: each domain has its own backend, made by
 * the factory `defineBackend` named. Workers run plain JavaScript, so these
 * tests use the built packages (`pnpm build` in core, sync and here first;
 * turbo does it before `test`) and the tasks in `fixtures/`.
 */
import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { accept, bindAndListen, close, getsockname, libuv, run, sleep, tcpv4 } from "../../dist/index.js";
import { eager } from "./fixtures/backend.mjs";
import * as F from "./fixtures/tasks.mjs";

const LO = "127.0.0.1";

describe("each domain has its own backend", () => {
  it("sleep works in parallel tasks, on each worker's own libuv backend", async () => {
    const out = await run(
      function* () {
        const one = yield* B.awaitExn(B.call(F.sleeper, 0.05));
        const all = yield* B.parallel(F.sleeper, [0.02, 0.02]);
        return { one, all: all.map((r) => (r.ok ? r.value : r.error)) };
      },
      { domains: 2 },
    );
    expect(out.one.domain).not.toBe(0);
    expect(out.one.backend).toBe("libuv");
    expect(out.one.ms).toBeGreaterThanOrEqual(49);
    expect(out.all.map((r) => (r as { domain: number }).domain).sort()).toEqual([1, 2]);
  });

  it("cancelling a worker asleep in sleep: it wakes at once, and its finally ran when cancel returns", async () => {
    const flags = new SharedArrayBuffer(8);
    const view = new Int32Array(flags);
    const out = await run(
      function* () {
        const t = B.call(F.longSleeper, { seconds: 10, flags });
        while (Atomics.load(view, 0) === 0) yield* sleep(0.001);
        const started = performance.now();
        yield* B.cancel(t);
        const cleaned = Atomics.load(view, 1);
        const r = yield* B.awaitTask(t);
        return { ms: performance.now() - started, cleaned, cancelled: !r.ok && r.error instanceof B.Cancelled };
      },
      { domains: 1 },
    );
    expect(out.cleaned).toBe(1);
    expect(out.cancelled).toBe(true);
    expect(out.ms).toBeLessThan(2000);
  });

  it("a backend factory defined with defineBackend serves the workers too", async () => {
    const out = await run(
      function* () {
        return yield* B.awaitExn(B.call(F.sleeper, 0.01));
      },
      { backend: eager, domains: 1 },
    );
    expect(out).toMatchObject({ domain: 1, backend: "libuv" });
  });

  it("an inline factory serves dom0 only: I/O in a worker is a TypeError that names defineBackend", async () => {
    const r = await run(
      function* () {
        return yield* B.awaitTask(B.call(F.sleeper, 0.01));
      },
      { backend: () => libuv(), domains: 1 },
    );
    expect(r.ok).toBe(false);
    const error = (r as { error: Error }).error;
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toMatch(/domain 1 has none.*defineBackend/);
  });

  it("withTimeout around a read in a worker throws Timeout there", async () => {
    const out = await run(
      function* () {
        const server = tcpv4();
        yield* bindAndListen(server, { host: LO, port: 0 });
        const silent = B.spawn(function* () {
          const [peer] = yield* accept(server); // accepts, and never writes
          return peer;
        });
        const result = yield* B.awaitExn(B.call(F.timedRead, { address: getsockname(server), seconds: 0.05 }));
        yield* close(yield* B.awaitExn(silent));
        yield* close(server);
        return result;
      },
      { domains: 1 },
    );
    expect(out).toMatchObject({ outcome: "Timeout", code: "ETIMEDOUT", domain: 1 });
    expect(out.ms).toBeGreaterThanOrEqual(45);
    expect(out.ms).toBeLessThan(2000);
  });
});
