import * as B from "@bobbin/core";
import { sleep } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { type Build, CheckFailed, check, explore, replay, type Sim, simulated } from "../src/index.js";

/**
 * A planted check-then-act race: two withdrawals each check the balance,
 * then (after a round trip to the ledger, 50 ms) take the money. Run apart
 * they are safe; when both check before either takes, the balance goes
 * below zero.
 */
const bank: Build = (sim) => {
  let balance = 100;
  function* withdraw(amount: number) {
    yield* sleep(Math.random()); // each client comes at its own time
    if (balance >= amount) {
      yield* sleep(0.05); // the gap between the check and the act
      balance -= amount;
    }
    if (balance < 0) throw new Error(`overdrawn: ${balance}`);
    return balance;
  }
  sim.client("alice", function* () {
    return yield* withdraw(80);
  });
  sim.client("bob", function* () {
    return yield* withdraw(80);
  });
};

describe("check", () => {
  it("runs a correct world as many times as asked and says which seed it started from", async () => {
    const report = await check(
      (sim) => {
        sim.client("c", function* () {
          yield* sleep(Math.random());
        });
      },
      { runs: 25, seed: 4 },
    );
    expect(report).toEqual({ runs: 25, seed: 4 });
  });

  it("finds the planted race, names its run and gives the line that replays it", async () => {
    const error = await check(bank, { runs: 200, seed: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckFailed);
    const failed = error as CheckFailed;
    expect((failed.cause as Error).message).toMatch(/^overdrawn: -60$/);
    expect(failed.original).toMatch(/^seed=\d+ policy=random$/);
    expect(failed.repro).toMatch(/^schedule=\S*$/);
    expect(failed.message).toContain(`replay(build, "${failed.repro}")`);
    expect(failed.message).toContain(`shrunk from ${failed.original}`);
    expect(failed.message).toMatch(new RegExp(`^run ${failed.run + 1} of 200 failed: Error: overdrawn`));
  });

  it("without shrinking, the line is the seed line of the run found", async () => {
    const failed = (await check(bank, { runs: 200, seed: 1, shrink: false }).catch((e: unknown) => e)) as CheckFailed;
    expect(failed.repro).toMatch(/^seed=\d+ policy=random$/);
    expect(failed.original).toBe(failed.repro);
    expect(failed.size).toBeUndefined();
    await expect(replay(bank, failed.repro)).rejects.toThrow("overdrawn: -60");
  });

  it("replay reproduces the failure exactly, every time, from either line", async () => {
    const failed = (await check(bank, { runs: 200, seed: 1 }).catch((e: unknown) => e)) as CheckFailed;
    for (const line of [failed.repro, failed.original]) {
      const traces = new Set<string>();
      for (let i = 0; i < 10; i++) {
        let sim: Sim | null = null;
        const keep: Build = (s) => {
          sim = s;
          return bank(s);
        };
        const error = await replay(keep, line, { trace: true }).catch((e: unknown) => e);
        expect((error as Error).message).toBe("overdrawn: -60");
        expect((error as { repro: string }).repro).toBe(line);
        traces.add(String(sim!.trace()));
      }
      expect(traces.size).toBe(1);
      expect([...traces][0]).toMatch(/alice main failed: Error: overdrawn: -60|bob main failed: Error: overdrawn: -60/);
    }
  });

  it("finds the race with PCT too, and the PCT repro replays it", async () => {
    const failed = (await check(bank, { runs: 200, seed: 2, policy: "pct", depth: 2 }).catch((e: unknown) => e)) as CheckFailed;
    expect(failed).toBeInstanceOf(CheckFailed);
    expect(failed.original).toMatch(/^seed=\d+ policy=pct depth=2 steps=\d+$/);
    await expect(replay(bank, failed.original)).rejects.toThrow("overdrawn: -60");
    await expect(replay(bank, failed.repro)).rejects.toThrow("overdrawn: -60");
  });

  it("a fixed world passes the same runs", async () => {
    const fixed: Build = (sim) => {
      let balance = 100;
      function* withdraw(amount: number) {
        yield* sleep(Math.random());
        if (balance >= amount) balance -= amount; // check and act in one step
        return balance;
      }
      sim.client("alice", () => withdraw(80));
      sim.client("bob", () => withdraw(80));
    };
    await expect(check(fixed, { runs: 200, seed: 1 })).resolves.toEqual({ runs: 200, seed: 1 });
  });

  it("checks its arguments", async () => {
    await expect(check("build" as unknown as Build)).rejects.toThrow(TypeError);
    await expect(check(bank, { runs: 0 })).rejects.toThrow(RangeError);
    await expect(check(bank, { seed: 0.5 })).rejects.toThrow(RangeError);
    await expect(replay(bank, "seed=x policy=random")).rejects.toThrow(/seed is missing or not an integer/);
    await expect(replay(bank, "seed=1 policy=lifo")).rejects.toThrow(/policy must be one of fifo, random, pct/);
    await expect(replay(bank, "seed=1 colour=red")).rejects.toThrow(/"colour=red" is not one of its fields/);
    await expect(replay(bank, 42 as unknown as string)).rejects.toThrow(TypeError);
    await expect(check(bank, { shrink: -1 })).rejects.toThrow(RangeError);
  });

  it("check, replay, explore and simulated refuse an option they do not have, naming it and the ones there are", async () => {
    await expect(check(bank, { run: 5 } as object)).rejects.toThrow(
      new TypeError('check(build, options): unknown option "run"; the options are runs, seed, policy, depth, limit, domains, shrink'),
    );
    await expect(replay(bank, "schedule=.", { traces: true } as object)).rejects.toThrow(
      new TypeError('replay(build, repro, options): unknown option "traces"; the options are trace'),
    );
    await expect(explore(bank, { maxRuns: 3 } as object)).rejects.toThrow(
      new TypeError('explore(build, options): unknown option "maxRuns"; the options are bound, runs, reduce, limit, domains'),
    );
    expect(() => simulated({ sed: 1 } as object)).toThrow(new TypeError('simulated(options): unknown option "sed"; the options are seed'));
  });
});

/**
 * Parallel tasks on simulated domains: two calls race, and a client wrongly
 * assumes the first one made always answers first. Which answers first
 * depends only on the schedule, so `check` finds the bad order and the seed
 * replays it.
 */
const firstCall = B.defineTask(import.meta.url, "firstCall", function* (name: string) {
  for (let i = 0; i < 3; i++) yield* B.yieldNow();
  return `${name}@${B.Domain.self()}`;
});

const callRace: Build = (sim) => {
  sim.client("c", function* () {
    const winner = yield* B.awaitFirst([B.call(firstCall, "early"), B.call(firstCall, "late")]);
    const value = winner.ok ? winner.value : "failed";
    if (!value.startsWith("early")) throw new Error(`the later call answered first: ${value}`);
    return value;
  });
};

describe("check with parallel tasks", () => {
  it("finds an order of calls on simulated domains, and replay gives it 10 times out of 10", async () => {
    const failed = (await check(callRace, { runs: 100, seed: 3, domains: 3 }).catch((e: unknown) => e)) as CheckFailed;
    expect(failed).toBeInstanceOf(CheckFailed);
    expect(failed.original).toMatch(/^seed=\d+ policy=random domains=3$/);
    expect(failed.repro).toMatch(/^schedule=\S* domains=3$/);
    const message = (failed.cause as Error).message;
    expect(message).toMatch(/^the later call answered first: late@[123]$/);
    for (let i = 0; i < 10; i++) await expect(replay(callRace, failed.repro)).rejects.toThrow(message);
  });
});
