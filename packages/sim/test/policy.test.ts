import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { type PolicyName, Sim } from "../src/index.js";
import { Pct } from "../src/policy.js";
import { WorldRandom } from "../src/random.js";

/** The order in which `tasks` tasks, each taking `steps` steps (yields), ran their steps under `policy`. */
async function interleaving(policy: PolicyName, seed: number, tasks = 3, steps = 4): Promise<string> {
  const sim = new Sim({ seed, policy });
  let order = "";
  sim.client("c", function* () {
    const workers = Array.from({ length: tasks }, (_, i) =>
      B.spawn(function* () {
        for (let s = 0; s < steps; s++) {
          order += String.fromCharCode(97 + i);
          yield* B.yieldNow();
        }
      }),
    );
    yield* B.awaitAll(workers);
  });
  await sim.run();
  return order;
}

describe("schedules", () => {
  it("fifo runs ready tasks in the order they became ready", async () => {
    expect(await interleaving("fifo", 1)).toBe("abcabcabcabc");
    expect(await interleaving("fifo", 2)).toBe("abcabcabcabc");
  });

  it("random draws each choice from the seed: the same seed, the same order; other seeds, other orders", async () => {
    const a = await interleaving("random", 1);
    expect(await interleaving("random", 1)).toBe(a);
    const others = new Set<string>();
    for (let seed = 2; seed < 12; seed++) others.add(await interleaving("random", seed));
    expect(others.size).toBeGreaterThan(5);
    for (const o of others) expect([...o].sort().join("")).toBe("aaaabbbbcccc");
  });

  it("pct runs the highest-priority task until it waits or a change point lowers it", async () => {
    const a = await interleaving("pct", 1);
    expect(await interleaving("pct", 1)).toBe(a);
    // runs of one task, switched only at the depth − 1 = 2 change points (or when a task ends)
    const switches = (s: string) => [...s].filter((c, i) => i > 0 && c !== s[i - 1]).length;
    for (let seed = 1; seed < 10; seed++) expect(switches(await interleaving("pct", seed))).toBeLessThanOrEqual(2 + 2);
  });
});

describe("PCT", () => {
  const task = (uid: number) => ({ uid }) as unknown as B.Task<unknown>;

  it("draws depth − 1 distinct change points among the first `steps` steps", () => {
    for (let seed = 0; seed < 20; seed++) {
      const pct = new Pct(new WorldRandom(seed), 4, 10);
      const changes = (pct as unknown as { changes: number[] }).changes;
      expect(changes.length).toBe(3);
      expect(new Set(changes).size).toBe(3);
      for (const c of changes) expect(c >= 1 && c <= 10).toBe(true);
      expect([...changes].sort((x, y) => x - y)).toEqual(changes);
    }
  });

  it("keeps picking one task until a change point, then another; counts its steps", () => {
    const ready = [task(1), task(2), task(3)];
    let seed = 0;
    const changeOf = (p: Pct) => (p as unknown as { changes: number[] }).changes[0]!;
    while (changeOf(new Pct(new WorldRandom(seed), 2, 5)) < 2) seed++; // a change point after the first step
    const pct = new Pct(new WorldRandom(seed), 2, 5);
    const change = changeOf(pct);
    const picks = Array.from({ length: 5 }, () => pct.pick(ready));
    const first = picks[0]!;
    for (let step = 1; step < change; step++) expect(picks[step - 1]).toBe(first);
    expect(picks[change - 1]).not.toBe(first);
    expect(pct.maxStep).toBe(5);
  });

  it("finds a depth-2 ordering bug that fifo never shows", async () => {
    // the bug: task b's write lands between task a's two steps
    const world = (policy: PolicyName, seed: number) => {
      const sim = new Sim({ seed, policy, depth: 2, steps: 20 });
      sim.client("c", function* () {
        let shared = 0;
        const a = B.spawn(function* () {
          shared = 1;
          yield* B.yieldNow();
          yield* B.yieldNow();
          if (shared !== 1) throw new Error("overwritten");
        });
        const b = B.spawn(function* () {
          yield* B.yieldNow();
          yield* B.yieldNow();
          yield* B.yieldNow();
          shared = 2;
        });
        for (const r of yield* B.awaitAll([a, b])) if (!r.ok) throw r.error;
      });
      return sim.run().then(
        () => false,
        () => true,
      );
    };
    for (let seed = 0; seed < 20; seed++) expect(await world("fifo", seed)).toBe(false);
    let found = 0;
    for (let seed = 0; seed < 40; seed++) if (await world("pct", seed)) found++;
    expect(found).toBeGreaterThan(0);
  });
});
