/**
 * Worker domains simulated on dom0's thread (`run({ simulateDomains: true })`):
 * the same rules as threads (placement, pins, copies, errors, cancellation),
 * on one thread, replayed from the seed. The tasks are defined here: no
 * worker imports this module.
 */
import { isMainThread } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import * as B from "../../dist-dev/index.js";
import * as L from "../../dist-dev/lowlevel/index.js";

const whereAmI = B.defineTask(import.meta.url, "whereAmI", function* () {
  return { domain: B.Domain.self(), mainThread: isMainThread };
});

const nested = B.defineTask(import.meta.url, "nested", function* () {
  const me = B.Domain.self();
  const child = yield* B.awaitExn(
    B.spawn(function* () {
      return B.Domain.self();
    }),
  );
  const other = (yield* B.awaitExn(B.call(whereAmI))).domain;
  return [me, child, other];
});

const kept: { value: { n: number } | null } = { value: null };
const mutate = B.defineTask(import.meta.url, "mutate", function* (box: { n: number }) {
  box.n += 1;
  kept.value = box;
  return box;
});

const size = B.defineTask(import.meta.url, "size", function* (buffer: ArrayBuffer) {
  return buffer.byteLength;
});

const returnsFunction = B.defineTask(import.meta.url, "returnsFunction", function* () {
  return () => 1;
});

const thrown: { error: unknown } = { error: null };
class Quota extends Error {
  override name = "Quota";
  constructor(readonly limit: number) {
    super(`over ${limit}`);
  }
}
B.defineError(import.meta.url, Quota);
const fails = B.defineTask(import.meta.url, "fails", function* (limit: number) {
  const error = new Quota(limit);
  thrown.error = error;
  throw error;
});

const cleanups: string[] = [];
const sleeper = B.defineTask(import.meta.url, "sleeper", function* (name: string) {
  try {
    yield* L.suspend(L.syscall("forever"));
  } finally {
    cleanups.push(`${name} on ${B.Domain.self()}`);
  }
});

/** Who ran when, across domains: module state is shared only because the domains share a thread. */
const order: string[] = [];
const steps = B.defineTask(import.meta.url, "steps", function* (name: string) {
  for (let i = 0; i < 4; i++) {
    order.push(`${name}${i}@${B.Domain.self()}`);
    yield* B.yieldNow();
  }
});

/** A seeded policy choosing any ready task, as a simulation would. */
function randomPolicy(seed: number): L.SchedulingPolicy {
  let state = seed >>> 0 || 1;
  return {
    pick(ready) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % ready.length;
    },
  };
}

const simulated = { simulateDomains: true } as const;

describe("simulated domains", () => {
  it("run calls on this thread, on worker domains chosen from the seed, never dom0", async () => {
    const places = (seed: number) =>
      B.run(
        function* () {
          const out: { domain: number; mainThread: boolean }[] = [];
          for (let i = 0; i < 40; i++) out.push(yield* B.awaitExn(B.call(whereAmI)));
          return out;
        },
        { ...simulated, domains: 3, seed },
      );
    const first = await places(5);
    expect(first.every((p) => p.mainThread)).toBe(true);
    expect(new Set(first.map((p) => p.domain))).toEqual(new Set([1, 2, 3]));
    expect(await places(5)).toEqual(first);
    expect((await places(6)).map((p) => p.domain)).not.toEqual(first.map((p) => p.domain));
  });

  it("a call's subtree is on its domain, and a nested call lands on another one", async () => {
    const triples = await B.run(
      function* () {
        const out: number[][] = [];
        for (let i = 0; i < 30; i++) out.push(yield* B.awaitExn(B.call(nested)));
        return out;
      },
      { ...simulated, domains: 3, seed: 1 },
    );
    for (const [me, child, other] of triples) {
      expect(me).toBeGreaterThan(0);
      expect(child).toBe(me);
      expect(other).not.toBe(me);
      expect(other).toBeGreaterThan(0);
    }
  });

  it("pins, and refuses dom0, the caller's simulated domain and unknown domains", async () => {
    await B.run(
      function* () {
        expect((yield* B.awaitExn(B.call({ pin: 2 }, whereAmI))).domain).toBe(2);
        expect(() => B.call({ pin: 0 }, whereAmI)).toThrow(/never run on dom0/);
        expect(() => B.call({ pin: 3 }, whereAmI)).toThrow(RangeError);
        const fromOne = B.defineTask(import.meta.url, "pinSelf", function* () {
          return B.call({ pin: 1 }, whereAmI);
        });
        const refused = yield* B.awaitTask(B.call({ pin: 1 }, fromOne));
        expect(refused.ok).toBe(false);
        expect(String((refused as { error: Error }).error)).toMatch(/never runs on its caller's domain/);
      },
      { ...simulated, domains: 2 },
    );
  });

  it("the only worker calling is NoDomainAvailable, as with threads", async () => {
    await B.run(
      function* () {
        const inner = yield* B.awaitTask(B.call(nested));
        expect(inner.ok).toBe(false);
        expect((inner as { error: Error }).error).toBeInstanceOf(B.NoDomainAvailable);
      },
      { ...simulated, domains: 1 },
    );
    await expect(
      B.run(
        function* () {
          return yield* B.awaitExn(B.call(whereAmI));
        },
        { ...simulated, domains: 0 },
      ),
    ).rejects.toThrow(/0 worker domains/);
  });

  it("arguments and results are copies; transferred buffers move", async () => {
    await B.run(
      function* () {
        const box = { n: 1 };
        const back = yield* B.awaitExn(B.call(mutate, box));
        expect(box.n).toBe(1);
        expect(back).toEqual({ n: 2 });
        expect(back).not.toBe(kept.value);
        const buffer = new ArrayBuffer(64);
        expect(yield* B.awaitExn(B.call({ transfer: [buffer] }, size, buffer))).toBe(64);
        expect(buffer.byteLength).toBe(0);
      },
      { ...simulated, domains: 2 },
    );
  });

  it("what cannot be cloned fails as across threads: arguments at the call, results in the task", async () => {
    await B.run(
      function* () {
        expect(() => B.call(mutate, { n: 1, f: () => 0 } as unknown as { n: number })).toThrow(B.Uncloneable);
        expect(() => B.call(mutate, { n: 1, f: () => 0 } as unknown as { n: number })).toThrow(/argument 1 of call\(mutate\)/);
        const r = yield* B.awaitTask(B.call(returnsFunction));
        expect(r.ok).toBe(false);
        expect((r as { error: Error }).error).toBeInstanceOf(B.Uncloneable);
      },
      { ...simulated, domains: 2 },
    );
  });

  it("errors cross back as copies that keep a registered class", async () => {
    await B.run(
      function* () {
        const r = yield* B.awaitTask(B.call(fails, 7));
        expect(r.ok).toBe(false);
        const error = (r as { error: Quota }).error;
        expect(error).toBeInstanceOf(Quota);
        expect(error.limit).toBe(7);
        expect(error.message).toBe("over 7");
        expect(error).not.toBe(thrown.error);
      },
      { ...simulated, domains: 2 },
    );
  });

  it("cancelling a call cancels its task on its domain, which cleans up", async () => {
    cleanups.length = 0;
    await B.run(
      function* () {
        const a = B.call({ pin: 1 }, sleeper, "a");
        const b = B.call({ pin: 2 }, sleeper, "b");
        yield* B.yieldNow();
        yield* B.cancel(a);
        yield* B.cancel(b);
        expect(a.status).toBe("cancelled");
      },
      { ...simulated, domains: 2 },
    );
    expect(cleanups).toEqual(["a on 1", "b on 2"]);
  });

  it("parallel spreads inputs over the domains and keeps their order", async () => {
    const results = await B.run(
      function* () {
        return yield* B.parallel(whereAmI, [undefined, undefined, undefined, undefined] as never[]);
      },
      { ...simulated, domains: 2 },
    );
    expect(results.map((r) => (r.ok ? r.value.domain : -1))).toEqual([1, 2, 1, 2]);
  });

  it("under a seeded policy, the interleaving of parallel tasks replays from the seed", async () => {
    const interleaving = async (seed: number) => {
      order.length = 0;
      await L.runKernel(
        function* () {
          yield* B.awaitAll(["a", "b", "c"].map((name) => B.call(steps, name)));
        },
        { ...simulated, domains: 3, seed, policy: randomPolicy(seed) },
      );
      return order.join(" ");
    };
    const first = await interleaving(11);
    expect(first.split(" ")).toHaveLength(12);
    expect(await interleaving(11)).toBe(first);
    const others = new Set<string>();
    for (let seed = 1; seed <= 8; seed++) others.add(await interleaving(seed));
    expect(others.size).toBeGreaterThan(1);
  });

  it("a dump shows each task on its simulated domain", async () => {
    const domains = await B.run(
      function* () {
        const t = B.call({ pin: 2 }, sleeper, "dumped");
        yield* B.yieldNow();
        const dump = yield* B.promise(() => B.dump());
        yield* B.cancel(t);
        const find = (tasks: readonly B.TaskDump[]): B.TaskDump | undefined =>
          tasks.map((x) => (x.name === "sleeper" ? x : find(x.children))).find((x) => x !== undefined);
        return [dump.tasks[0]!.domain, find(dump.tasks)?.domain];
      },
      { ...simulated, domains: 2 },
    );
    expect(domains).toEqual([0, 2]);
  });

  it("the option is checked", () => {
    expect(() => B.run(function* () {}, { simulateDomains: "yes" as unknown as boolean })).toThrow(/simulateDomains/);
  });
});
