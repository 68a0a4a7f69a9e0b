import * as B from "@bobbin/core";
import { accept, bindAndListen, close, connect, read, sleep, tcpv4, write } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { type Build, ExploreFailed, type ExploreOptions, explore, replay } from "../src/index.js";
import { flagRace } from "./support/programs.js";

/** A bug that needs one preemption (see support/programs.ts). */
const overwrite: Build = (sim) => {
  sim.client("flag", flagRace());
};

/** Every outcome `world(seen)` reports over the schedules `explore` runs, and its report. */
async function outcomes(world: (seen: Set<string>) => Build, options: ExploreOptions) {
  const seen = new Set<string>();
  const report = await explore(world(seen), options);
  return { seen, report };
}

/** Three tasks of one host append to a shared log, each in two steps. */
const appenders =
  (seen: Set<string>): Build =>
  (sim) => {
    sim.client("c", function* () {
      let log = "";
      const appender = (name: string) =>
        B.spawn(function* () {
          log += name;
          yield* B.yieldNow();
          log += name.toUpperCase();
        });
      yield* B.awaitAll([appender("a"), appender("b"), appender("c")]);
      seen.add(log);
    });
  };

/**
 * Two clients on their own hosts connect to a server, which records whom it
 * heard first; with `counter`, a third host counts on its own, touching
 * nobody.
 */
const arrivals =
  (counter: boolean) =>
  (seen: Set<string>): Build =>
  (sim) => {
    let order = "";
    sim.host("server", function* () {
      const s = tcpv4();
      yield* bindAndListen(s, { host: "0.0.0.0", port: 80 });
      for (;;) {
        const [c] = yield* accept(s);
        const buf = Buffer.alloc(8);
        const n = yield* read(c, buf);
        order += buf.toString("utf8", 0, n);
        yield* close(c);
      }
    });
    for (const name of ["a", "b"]) {
      sim.client(name, function* () {
        const c = tcpv4();
        yield* connect(c, { host: "server", port: 80 });
        yield* write(c, name);
        yield* read(c, Buffer.alloc(1));
        yield* close(c);
        yield* sleep(1);
        seen.add(order);
      });
    }
    if (counter) {
      sim.client("counter", function* () {
        let n = 0;
        for (let i = 0; i < 3; i++) {
          n++;
          yield* B.yieldNow();
        }
        return n;
      });
    }
  };

describe("explore", () => {
  it("finds a bug that needs one preemption within a bound of 1, and none within 0 (every schedule run)", async () => {
    const none = await explore(overwrite, { bound: 0 });
    expect(none.exhausted).toBe(true);
    const error = await explore(overwrite, { bound: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExploreFailed);
    const failed = error as ExploreFailed;
    expect((failed.cause as Error).message).toBe("overwritten by other");
    expect(failed.repro).toMatch(/^schedule=\S+\.\S*$/);
    expect(failed.message).toContain(`replay(build, "${failed.repro}")`);
    for (let i = 0; i < 3; i++) await expect(replay(overwrite, failed.repro)).rejects.toThrow("overwritten by other");
  });

  it("needs no seed: the same world gives the same count of schedules every time", async () => {
    const first = await explore((sim) => appenders(new Set())(sim), { bound: 2 });
    expect(await explore((sim) => appenders(new Set())(sim), { bound: 2 })).toEqual(first);
    expect(first.exhausted).toBe(true);
    expect(first.schedules).toBeGreaterThan(1);
  });

  it("reaches every outcome the naive search reaches: tasks of one host are all reordered", async () => {
    for (const bound of [0, 1, 2, { preemptions: 1, steps: 20 }]) {
      const naive = await outcomes(appenders, { bound, reduce: false });
      const reduced = await outcomes(appenders, { bound, reduce: true });
      expect(naive.report.exhausted && reduced.report.exhausted).toBe(true);
      expect([...reduced.seen].sort()).toEqual([...naive.seen].sort());
    }
    const all = await outcomes(appenders, { bound: 6 });
    expect(all.seen.size).toBe(90); // 6! / 2^3 orders keep each task's two steps in order
  });

  it("runs one order of steps that touch nothing in common, and still reaches every outcome", async () => {
    const naive = await outcomes(arrivals(false), { bound: 0, reduce: false });
    const reduced = await outcomes(arrivals(false), { bound: 0 });
    expect(naive.report.exhausted && reduced.report.exhausted).toBe(true);
    expect(reduced.seen).toEqual(new Set(["ab", "ba"]));
    expect(naive.seen).toEqual(reduced.seen);
    expect(reduced.report.schedules + reduced.report.pruned).toBeLessThan(naive.report.schedules / 10);
    // A host that touches nobody adds no schedule to the reduced search; the naive one multiplies.
    const more = await outcomes(arrivals(true), { bound: 0 });
    expect(more.report.schedules).toBe(reduced.report.schedules);
    expect(more.seen).toEqual(reduced.seen);
    const naiveMore = await explore(arrivals(true)(new Set()), { bound: 0, reduce: false, runs: naive.report.schedules });
    expect(naiveMore.exhausted).toBe(false);
  }, 120_000); // the naive searches run 4,000 schedules

  it("explores the kernel's ties: either of two tasks that ended together may be first", async () => {
    const ties =
      (seen: Set<string>): Build =>
      (sim) => {
        sim.client("c", function* () {
          const tasks = [
            B.spawn(function* () {
              return "x";
            }),
            B.spawn(function* () {
              return "y";
            }),
          ];
          yield* B.yieldNow();
          yield* B.yieldNow();
          const first = yield* B.awaitFirst(tasks);
          seen.add(first.ok ? first.value : "failed");
        });
      };
    const { seen } = await outcomes(ties, { bound: 0 });
    expect(seen).toEqual(new Set(["x", "y"]));
  });

  it("says when its runs ran out before the schedules did", async () => {
    expect(await explore((sim) => appenders(new Set())(sim), { bound: 6, runs: 10 })).toEqual({
      schedules: 10,
      pruned: 0,
      exhausted: false,
    });
  });

  it("refuses a world that is not the same from one run to the next", async () => {
    let runs = 0;
    const drifting: Build = (sim) => {
      const tasks = 1 + ++runs;
      sim.client("c", function* () {
        yield* B.awaitAll(
          Array.from({ length: tasks }, () =>
            B.spawn(function* () {
              yield* B.yieldNow();
            }),
          ),
        );
      });
    };
    const error = await explore(drifting).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/^explore\(build\): the same choices led to different worlds in two runs/);
  });

  it("checks its options", async () => {
    await expect(explore(overwrite, { bound: -1 })).rejects.toThrow(/preemptions must be an integer ≥ 0/);
    await expect(explore(overwrite, { bound: { steps: 1.5 } })).rejects.toThrow(/steps must be an integer ≥ 0/);
    await expect(explore(overwrite, { runs: 0 })).rejects.toThrow(RangeError);
    await expect(explore(overwrite, { reduce: "yes" as unknown as boolean })).rejects.toThrow(TypeError);
    await expect(explore("build" as unknown as Build)).rejects.toThrow(TypeError);
  });
});
