/**
 * Domains: parallel tasks on worker threads. Workers run plain JavaScript, so
 * these tests use the package's development build (`dist-dev/`: the built package with the
 * kernel's invariant checks) and the fixtures in `fixtures/`.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as B from "../dist-dev/index.js";
import * as L from "../dist-dev/lowlevel/index.js";
import * as F from "./fixtures/parallel-tasks.mjs";
import { LIVE_HANDLES } from "./support/processes.js";

describe("call", () => {
  it("never runs on dom0, and placement is random over the workers (100 runs)", async () => {
    const seen = await B.run(
      function* () {
        const places = new Set<number>();
        for (let i = 0; i < 100; i++) places.add(yield* B.awaitExn(B.call(F.whereAmI)));
        return places;
      },
      { domains: 3, seed: 7 },
    );
    expect(seen.has(0)).toBe(false);
    expect([...seen].sort()).toEqual([1, 2, 3]);
  });

  it("the seed replays the placement", async () => {
    const places = (seed: number) =>
      B.run(
        function* () {
          const out: number[] = [];
          for (let i = 0; i < 20; i++) out.push(yield* B.awaitExn(B.call(F.whereAmI)));
          return out;
        },
        { domains: 3, seed },
      );
    expect(await places(42)).toEqual(await places(42));
  });

  it("a nested call from a worker lands on another worker (100 runs)", async () => {
    const pairs = await B.run(
      function* () {
        const out: number[][] = [];
        for (let i = 0; i < 100; i++) out.push(yield* B.awaitExn(B.call(F.nested)));
        return out;
      },
      { domains: 3 },
    );
    for (const [caller, callee] of pairs) {
      expect(caller).not.toBe(callee);
      expect(callee).not.toBe(0);
    }
  });

  it("pins, and refuses dom0, the caller's domain and unknown domains", async () => {
    await B.run(
      function* () {
        expect(yield* B.awaitExn(B.call({ pin: 2 }, F.whereAmI))).toBe(2);
        expect(() => B.call({ pin: 0 }, F.whereAmI)).toThrow(/never run on dom0/);
        expect(() => B.call({ pin: 3 }, F.whereAmI)).toThrow(RangeError);
        expect(() => B.call({ pin: 1.5 }, F.whereAmI)).toThrow(RangeError);
      },
      { domains: 2 },
    );
  });

  it("NoDomainAvailable with 0 workers, and when the only worker calls", async () => {
    await expect(
      B.run(
        function* () {
          B.call(F.whereAmI);
        },
        { domains: 0 },
      ),
    ).rejects.toBeInstanceOf(B.NoDomainAvailable);
    const r = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(F.nested));
      },
      { domains: 1 },
    );
    expect(r.ok).toBe(false);
    expect((r as { error: Error }).error).toBeInstanceOf(B.NoDomainAvailable);
    expect((r as { error: Error }).error.name).toBe("NoDomainAvailable");
  });

  it("a plain function is a TypeError that explains defineTask", async () => {
    await B.run(
      function* () {
        expect(() => B.call((() => 1) as never)).toThrow(/defineTask/);
        expect(() => B.call({ pin: 1 }, (() => 1) as never)).toThrow(/defineTask/);
      },
      { domains: 1 },
    );
  });

  it("an argument or a result that cannot be cloned is Uncloneable, naming it", async () => {
    await B.run(
      function* () {
        let error: unknown;
        try {
          B.call(F.double, (() => 1) as never);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(B.Uncloneable);
        expect(String(error)).toMatch(/argument 1 of call\(double\)/);
        const r = yield* B.awaitTask(B.call(F.returnsFunction));
        expect((r as { error: Error }).error).toBeInstanceOf(B.Uncloneable);
        expect(String((r as { error: Error }).error)).toMatch(/result/);
      },
      { domains: 1 },
    );
  });

  it("results posted together: one that cannot be cloned fails its own call only", async () => {
    const results = await B.run(
      function* () {
        // Started in one slice, so the worker runs them in one slice too and posts their results together.
        const tasks = [B.call(F.double, 1), B.call(F.returnsFunction), B.call(F.double, 2), B.call(F.double, 3)];
        return yield* B.awaitAll(tasks);
      },
      { domains: 1 },
    );
    expect(results.map((r) => (r.ok ? r.value : (r.error as Error).name))).toEqual([2, "Uncloneable", 4, 6]);
  });

  it("errors keep their class and message across domains", async () => {
    const r = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(F.fail, "bad input"));
      },
      { domains: 1 },
    );
    expect((r as { error: Error }).error).toBeInstanceOf(RangeError);
    expect((r as { error: Error }).error.message).toBe("bad input");
  });

  it("moves transferables with { transfer }", async () => {
    const buffer = new Uint8Array([1, 2, 3, 4]).buffer;
    const total = await B.run(
      function* () {
        return yield* B.awaitExn(B.call({ transfer: [buffer] }, F.sum, buffer));
      },
      { domains: 1 },
    );
    expect(total).toBe(10);
    expect(buffer.byteLength).toBe(0);
  });
});

describe("parallel", () => {
  it("spreads inputs round-robin over the workers and keeps input order (the book's example)", async () => {
    const domains = await B.run(
      function* () {
        return (yield* B.parallel(F.whereAmI as unknown as B.ParallelTask<[number], number>, [0, 0, 0])).map((r) => (r.ok ? r.value : -1));
      },
      { domains: 3 },
    );
    expect(domains).toEqual([1, 2, 3]);
  });

  it("a failing element is an error at its index only", async () => {
    const results = await B.run(
      function* () {
        return yield* B.parallel(F.fail, ["a", "b"]);
      },
      { domains: 2 },
    );
    expect(results.map((r) => (r.ok ? "ok" : (r.error as Error).message))).toEqual(["a", "b"]);
    const mixed = await B.run(
      function* () {
        return yield* B.parallel(F.double, [1, 2, 3]);
      },
      { domains: 2 },
    );
    expect(mixed).toEqual([1, 2, 3].map((n) => ({ ok: true, value: n * 2 })));
  });

  it("the first parallel of a run starts its calls together, even when a worker boots late", async () => {
    // Domain 2 spends 300 ms making its events backend; without waiting for every worker, domain 1 would start
    // its call (and take domain 2's) that much earlier. Shown by order, not by how close the starts are: on a
    // loaded machine two threads told to go at once may run a timeslice or more apart.
    const starts = await L.runKernel(
      function* () {
        return (yield* B.parallel(F.startedAt, [undefined, undefined] as never[])).map((r) => (r.ok ? r.value : null));
      },
      { domains: 2, events: F.slowBootEvents },
    );
    expect(starts.map((s) => s?.domain).sort()).toEqual([1, 2]);
    const lateBoot = Math.max(...starts.map((s) => s!.bootedAt));
    for (const s of starts) expect(s!.at).toBeGreaterThanOrEqual(lateBoot);
  });

  it("dom0 joins in through spawn while parallel tasks use the workers", async () => {
    const all = await B.run(
      function* () {
        const local = B.spawn(function* () {
          return B.Domain.self();
        });
        const remote = yield* B.parallel(F.whereAmI as unknown as B.ParallelTask<[number], number>, [0, 0]);
        return [yield* B.awaitExn(local), ...remote.map((r) => (r.ok ? r.value : -1))];
      },
      { domains: 2 },
    );
    expect(all).toEqual([0, 1, 2]);
  });
});

describe("the kernel's checks", () => {
  it("run in worker domains too (the development build): a broken protocol there fails the run with InternalError", async () => {
    const error = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(F.breaksProtocol));
      },
      { domains: 1 },
    ).then(
      () => null,
      (e: unknown) => e,
    );
    // The worker's kernel failed (its domain then stops, which dom0 reports after it).
    const first = error instanceof B.Failures ? error.errors[0] : error;
    expect(first).toBeInstanceOf(B.InternalError);
    expect(String((first as B.InternalError).cause)).toContain("invariant broken: breaksProtocol#");
  });
});

describe("the task tree across domains", () => {
  it("cancelling a worker asleep: its finally has run when cancel returns", async () => {
    const flags = new SharedArrayBuffer(8);
    const view = new Int32Array(flags);
    await B.run(
      function* () {
        const t = B.call(F.sleeper, flags);
        while (Atomics.load(view, 0) === 0) yield* B.promise(() => new Promise((r) => setTimeout(r, 1)));
        yield* B.cancel(t);
        expect(Atomics.load(view, 1)).toBe(1);
        const r = yield* B.awaitTask(t);
        expect((r as { error: Error }).error).toBeInstanceOf(B.Cancelled);
      },
      { domains: 1 },
    );
  });

  it("awaitFirst across domains cancels the loser on its worker", async () => {
    const flags = new SharedArrayBuffer(8);
    const view = new Int32Array(flags);
    const r = await B.run(
      function* () {
        return yield* B.awaitFirst([B.call(F.sleeper, flags), B.call(F.double, 4)]);
      },
      { domains: 2 },
    );
    expect(r).toEqual({ ok: true, value: 8 });
    expect(Atomics.load(view, 1)).toBe(Atomics.load(view, 0));
  });

  it("StillHasChildren raised in a worker fails run", async () => {
    await expect(
      B.run(
        function* () {
          yield* B.awaitTask(B.call(F.forgetsChild));
        },
        { domains: 1 },
      ),
    ).rejects.toBeInstanceOf(B.StillHasChildren);
  });

  it("parallel tasks can be orphans", async () => {
    const results = await B.run(
      function* () {
        const bg = B.orphans<number>();
        for (let i = 1; i <= 4; i++) B.call({ orphans: bg }, F.double, i);
        return (yield* B.drain(bg)).map((r) => (r.ok ? r.value : -1)).sort();
      },
      { domains: 2 },
    );
    expect(results).toEqual([2, 4, 6, 8]);
  });

  it("a forgotten parallel task is a forgotten child", async () => {
    await expect(
      B.run(
        function* () {
          B.call(F.double, 1);
        },
        { domains: 1 },
      ),
    ).rejects.toBeInstanceOf(B.StillHasChildren);
  });

  it("a cancelled parallel task stuck in a synchronous loop: its domain is terminated and run fails naming it", async () => {
    const t0 = performance.now();
    const r = await B.run(
      function* () {
        const flags = new SharedArrayBuffer(4);
        const t = B.call(F.spinForever, flags);
        while (Atomics.load(new Int32Array(flags), 0) === 0) yield* B.promise(() => new Promise((resolve) => setTimeout(resolve, 5)));
        yield* B.cancel(t);
        return "cancelled";
      },
      { domains: 1, cancelGraceMs: 300 },
    ).then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    expect(r.ok).toBe(false);
    const error = (r as { error: unknown }).error;
    expect(error).toBeInstanceOf(B.DomainUnresponsive);
    expect((error as B.DomainUnresponsive).domain).toBe(1);
    expect((error as Error).message).toMatch(/domain 1 did not end spinForever#\d+ within 300 ms/);
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it("Domain.available and Domain.all describe the run", async () => {
    const info = await B.run(
      function* () {
        return [B.Domain.available(), B.Domain.all()];
      },
      { domains: 3 },
    );
    expect(info).toEqual([3, [1, 2, 3]]);
  });

  it("workers are gone when run settles: the process exits on its own", async () => {
    const script = `
      import * as B from ${JSON.stringify(fileURLToPath(new URL("../dist-dev/index.js", import.meta.url)))};
      import * as F from ${JSON.stringify(fileURLToPath(new URL("./fixtures/parallel-tasks.mjs", import.meta.url)))};
      const v = await B.run(function* () { return yield* B.parallel(F.double, [1, 2, 3, 4]); }, { domains: 2 });
      console.log(v.length, JSON.stringify(${LIVE_HANDLES}));
    `;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ["--input-type=module", "-e", script], { timeout: 15_000 }, (error, stdout) =>
        error ? reject(error) : resolve(stdout.trim()),
      ),
    );
    expect(out).toBe("4 []");
  });
});
