/**
 * The kernel's seams: a scheduling policy, trace points and the run's random
 * source (what `@bobbin/sim` builds on). Unused, they change nothing.
 */
import { describe, expect, it } from "vitest";
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";
import { yieldTimes } from "../support/helpers.js";

function* worker(log: string[], name: string, n: number): Generator<B.Instruction, void, unknown> {
  for (let i = 0; i < n; i++) {
    log.push(name);
    yield* B.yieldNow();
  }
}

function* twoWorkers(log: string[]): Generator<B.Instruction, void, unknown> {
  yield* B.awaitAll([B.spawn(worker, log, "a", 3), B.spawn(worker, log, "b", 3)]);
}

describe("scheduling policy", () => {
  it("by default the task that waited longest runs next", async () => {
    const log: string[] = [];
    await B.run(() => twoWorkers(log));
    expect(log.join("")).toBe("ababab");
  });

  it("a policy picks among the ready tasks, oldest first", async () => {
    const log: string[] = [];
    const offered: number[] = [];
    const newestFirst: L.SchedulingPolicy = {
      pick(ready) {
        offered.push(ready.length);
        return ready.length - 1;
      },
    };
    await L.runKernel(() => twoWorkers(log), { policy: newestFirst });
    expect(log.join("")).not.toBe("ababab");
    expect(log.filter((x) => x === "a")).toHaveLength(3);
    expect(Math.max(...offered)).toBeGreaterThanOrEqual(2);
  });

  it("a policy with everyStep is asked before every step, even with one task ready", async () => {
    const offered = (everyStep: boolean) => {
      const sizes: number[] = [];
      const policy: L.SchedulingPolicy = {
        everyStep,
        pick(ready) {
          sizes.push(ready.length);
          return 0;
        },
      };
      return L.runKernel(() => twoWorkers([]), { policy }).then(() => sizes);
    };
    const some = await offered(false);
    const every = await offered(true);
    expect(some.every((n) => n > 1)).toBe(true);
    expect(every.filter((n) => n === 1).length).toBeGreaterThan(0);
    expect(every.filter((n) => n > 1)).toEqual(some);
  });
});

describe("trace points", () => {
  it("report spawn, start, suspend, resume, cancel and end of every task, in order", async () => {
    const events: string[] = [];
    const tracer: L.Tracer = {
      spawn: (t, p) => events.push(`spawn ${t.name} by ${p.name}`),
      start: (t) => events.push(`start ${t.name}`),
      suspend: (t) => events.push(`suspend ${t.name}`),
      resume: (t) => events.push(`resume ${t.name}`),
      cancel: (t) => events.push(`cancel ${t.name}`),
      end: (t) => events.push(`end ${t.name} ${t.status}`),
    };
    await L.runKernel(
      function* main() {
        const sleeper = B.spawn(function* sleeper() {
          yield* new L.Trigger().wait();
        });
        yield* B.yieldNow();
        yield* B.cancel(sleeper);
      },
      { tracer },
    );
    expect(events).toEqual([
      "start main",
      "spawn sleeper by main",
      "start sleeper",
      "suspend sleeper",
      "cancel sleeper",
      "suspend main",
      "end sleeper cancelled",
      "resume main",
      "end main resolved",
    ]);
  });
});

describe("the run's random source", () => {
  it("decides awaitFirst ties, and replaces the seeded generator", async () => {
    const picks: number[] = [];
    const first: L.RandomSource = {
      below(bound) {
        picks.push(bound);
        return bound - 1;
      },
    };
    const value = await L.runKernel(
      function* () {
        const ts = [B.spawn(yieldTimes, 0), B.spawn(yieldTimes, 0), B.spawn(yieldTimes, 0)];
        yield* yieldTimes(2);
        const r = yield* B.awaitOne(ts);
        yield* B.awaitAll(ts);
        return ts.findIndex((t) => r.ok && t === ts[2]);
      },
      { random: first },
    );
    expect(picks).toEqual([3]);
    expect(value).toBe(2);
  });
});
