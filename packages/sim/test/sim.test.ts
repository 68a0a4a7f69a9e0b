import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { failure, handleCount } from "@bobbin/test-support";
import { accept, bindAndListen, sleep, Timeout, tcpv4, withTimeout } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { Sim, SimDeadlock, SimTimeLimit } from "../src/index.js";

describe("running a world", () => {
  it("resolves with the clients' results in declaration order, then cancels the hosts still running", async () => {
    const sim = new Sim({ seed: 1 });
    const cleaned: string[] = [];
    sim.host("server", function* () {
      try {
        yield* sleep(Infinity);
      } finally {
        cleaned.push(`server at ${sim.now()}`);
      }
    });
    sim.client("slow", function* () {
      yield* sleep(2);
      return "slow";
    });
    sim.client("fast", function* () {
      yield* sleep(1);
      return "fast";
    });
    expect(await sim.run()).toEqual(["slow", "fast"]);
    expect(cleaned).toEqual(["server at 2"]);
  });

  it("loses no error as it stops the hosts: the world's failure first, then what each host's cleanup threw", async () => {
    const sim = new Sim({ seed: 1 });
    const clientError = new Error("client failed");
    const cleanups = [new Error("a's cleanup failed"), new Error("b's cleanup failed")];
    for (const [i, name] of ["a", "b"].entries()) {
      sim.host(name, function* () {
        try {
          yield* sleep(Infinity);
        } finally {
          // biome-ignore lint/correctness/noUnsafeFinally: a cleanup that fails is what this test is about
          throw cleanups[i];
        }
      });
    }
    sim.client("client", function* () {
      yield* sleep(1);
      throw clientError;
    });
    const error = await sim.run().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(B.Failures);
    expect((error as B.Failures).errors).toEqual([clientError, ...cleanups]);
    expect((error as { repro?: string }).repro).toMatch(/seed/);
  });

  it("without clients, runs until every host's main has returned", async () => {
    const sim = new Sim({ seed: 1 });
    sim.host("a", function* () {
      yield* sleep(3);
    });
    sim.host("b", function* () {
      yield* sleep(5);
    });
    expect(await sim.run()).toEqual([]);
    expect(sim.now()).toBe(5);
  });

  it("virtual time: an hour of sleeps and timeouts costs no real time", async () => {
    const sim = new Sim({ seed: 1 });
    sim.client("client", function* () {
      const sleepers = Array.from({ length: 100 }, (_, i) =>
        B.spawn(function* () {
          yield* sleep(36 * (i + 1));
        }),
      );
      yield* B.awaitAll(sleepers);
      const timedOut = yield* failure(() => withTimeout(60, sleep(3600)));
      return [sim.now(), timedOut instanceof Timeout];
    });
    const t0 = performance.now();
    expect(await sim.run()).toEqual([[3660, true]]);
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});

describe("failures", () => {
  it("a host's error fails the run, carrying the line that replays it", async () => {
    const sim = new Sim({ seed: 77, policy: "random" });
    sim.host("server", function* () {
      yield* sleep(1);
      throw new Error("server broke");
    });
    sim.client("client", function* () {
      yield* sleep(10);
    });
    const error = await sim.run().then(
      () => null,
      (e: unknown) => e as Error & { repro: string },
    );
    expect(error?.message).toBe("server broke");
    expect(error?.repro).toBe("seed=77 policy=random");
    expect(sim.repro).toBe("seed=77 policy=random");
  });

  it("a thrown value that cannot carry repro is wrapped", async () => {
    const sim = new Sim({ seed: 3 });
    sim.client("client", function* () {
      throw "a string";
    });
    await expect(sim.run()).rejects.toMatchObject({
      message: "the simulation failed with a string",
      cause: "a string",
      repro: "seed=3 policy=fifo",
    });
  });

  it("a world where every task waits and nothing is to come fails with SimDeadlock", async () => {
    const sim = new Sim({ seed: 1 });
    sim.host("server", function* () {
      const s = tcpv4();
      yield* bindAndListen(s, { host: "0.0.0.0", port: 1 });
      yield* accept(s); // nobody connects
    });
    sim.client("client", function* () {
      yield* sleep(5);
      yield* new L.Trigger().wait(); // nobody signals it
    });
    const error = await sim.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SimDeadlock);
    expect((error as SimDeadlock).time).toBe(5);
    expect((error as Error).message).toMatch(/server \(up\), client \(up\)/);
    expect((error as { repro: string }).repro).toBe("seed=1 policy=fifo");
  });

  it("a task waiting on a Promise that settles in microtasks is not a deadlock", async () => {
    const sim = new Sim({ seed: 1 });
    sim.client("client", function* () {
      yield* sleep(1);
      return yield* B.promise(() => Promise.resolve(42).then((x) => x + 1));
    });
    expect(await sim.run()).toEqual([43]);
  });

  it("a world that keeps busy past its limit fails with SimTimeLimit", async () => {
    const sim = new Sim({ seed: 1, limit: 60 });
    sim.host("ticker", function* () {
      for (;;) yield* sleep(1);
    });
    sim.client("client", function* () {
      yield* new L.Trigger().wait();
    });
    const error = await sim.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SimTimeLimit);
    expect((error as { repro: string }).repro).toBe("seed=1 policy=fifo limit=60");
    expect(sim.now()).toBe(60);
  });

  it("core's rules still hold inside a host (a main returning with a live child)", async () => {
    const sim = new Sim({ seed: 1 });
    sim.client("client", function* () {
      B.spawn(function* () {
        yield* sleep(1);
      });
    });
    await expect(sim.run()).rejects.toBeInstanceOf(B.StillHasChildren);
  });
});

/**
 * `sim.run()` settled within `ms` of real time, or a failure saying it did
 * not: a run that never settles fails its test rather than hanging the suite.
 */
async function settledWithin<T>(run: Promise<T>, ms: number): Promise<B.Result<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`sim.run() did not settle within ${ms} ms of real time`)), ms);
  });
  try {
    return await Promise.race([
      run.then(
        (value): B.Result<T> => ({ ok: true, value }),
        (error: unknown): B.Result<T> => ({ ok: false, error }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Counts the calls of the world's `select`: the world's loop runs while they go on. */
function countSelects(sim: Sim): () => number {
  const backend = sim.simulated.backend as unknown as L.Events;
  const select = backend.select.bind(backend);
  let calls = 0;
  backend.select = (block, cancelled) => {
    calls++;
    return select(block, cancelled);
  };
  return () => calls;
}

/** A host whose cleanup, once it is cancelled, waits on a trigger nobody signals. */
function* stuckInCleanup(log: string[]): Generator<B.Instruction, void, unknown> {
  try {
    yield* sleep(Infinity);
  } finally {
    log.push("cleanup waits");
    yield* new L.Trigger().wait();
    log.push("cleanup ended");
  }
}

describe("a run whose hosts cannot stop", () => {
  it("settles when a host's cleanup waits forever once the world stops: SimDeadlock names it, nothing is left running", async () => {
    const timeouts = handleCount("Timeout");
    const sim = new Sim({ seed: 1 });
    const log: string[] = [];
    sim.host("stuck", () => stuckInCleanup(log));
    sim.client("client", function* () {
      yield* sleep(1);
      return "done";
    });
    const selects = countSelects(sim);
    const result = await settledWithin(sim.run(), 5000);
    const error = result.ok ? null : result.error;
    expect(error).toBeInstanceOf(SimDeadlock);
    expect((error as SimDeadlock).stopping).toBe("stuck");
    expect((error as SimDeadlock).time).toBe(1);
    expect((error as Error).message).toMatch(/stopping its hosts at t=1s and stuck never stops: .*: stuck \(up\), client \(up\)/);
    expect((error as { repro: string }).repro).toBe("seed=1 policy=fifo");
    // The world's loop stopped: no select since, no immediate queued, no timer left.
    const calls = selects();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(selects()).toBe(calls);
    expect(handleCount("Immediate")).toBe(0);
    expect(handleCount("Timeout")).toBeLessThanOrEqual(timeouts);
    expect(log).toEqual(["cleanup waits"]); // the abandoned cleanup never ran again
    // The next simulation of this thread runs.
    const next = new Sim({ seed: 2 });
    next.client("client", function* () {
      yield* sleep(1);
      return "next";
    });
    expect(await settledWithin(next.run(), 5000)).toEqual({ ok: true, value: ["next"] });
  });

  it("loses no error: the world's failure, then what other hosts' cleanup threw, then the deadlock", async () => {
    const sim = new Sim({ seed: 1 });
    const clientError = new Error("client failed");
    const cleanupError = new Error("a's cleanup failed");
    sim.host("a", function* () {
      try {
        yield* sleep(Infinity);
      } finally {
        // biome-ignore lint/correctness/noUnsafeFinally: a cleanup that fails is what this test is about
        throw cleanupError;
      }
    });
    sim.host("b", () => stuckInCleanup([]));
    sim.client("client", function* () {
      yield* sleep(1);
      throw clientError;
    });
    const result = await settledWithin(sim.run(), 5000);
    const error = result.ok ? null : result.error;
    expect(error).toBeInstanceOf(B.Failures);
    const [first, second, third] = (error as B.Failures).errors;
    expect([first, second]).toEqual([clientError, cleanupError]);
    expect(third).toBeInstanceOf(SimDeadlock);
    expect((third as SimDeadlock).stopping).toBe("b");
    expect((error as { repro?: string }).repro).toBe("seed=1 policy=fifo");
  });

  it("a crashed host whose cleanup waits forever: the run ends with the clients, then stopping it is abandoned", async () => {
    const sim = new Sim({ seed: 1 });
    sim.host("stuck", () => stuckInCleanup([]));
    sim.client("client", function* () {
      yield* sleep(1);
      sim.crash("stuck"); // its cleanup never ends: nor does the crash
      yield* sleep(1);
      return "done";
    });
    const result = await settledWithin(sim.run(), 5000);
    const error = result.ok ? null : result.error;
    expect(error).toBeInstanceOf(SimDeadlock);
    expect([(error as SimDeadlock).time, (error as SimDeadlock).stopping]).toEqual([2, "stuck"]);
    expect((error as Error).message).toMatch(/stuck \(down\), client \(up\)/);
  });

  it("a host's cleanup that keeps waiting on time ends at the world's limit, with SimTimeLimit naming it", async () => {
    const sim = new Sim({ seed: 1, limit: 60 });
    let ticks = 0;
    sim.host("ticker", function* () {
      try {
        yield* sleep(Infinity);
      } finally {
        for (;;) {
          yield* sleep(1);
          ticks++;
        }
      }
    });
    sim.client("client", function* () {
      yield* sleep(1);
      return "done";
    });
    const result = await settledWithin(sim.run(), 5000);
    const error = result.ok ? null : result.error;
    expect(error).toBeInstanceOf(SimTimeLimit);
    expect((error as SimTimeLimit).stopping).toBe("ticker");
    expect((error as Error).message).toMatch(/limit of 60 virtual seconds while stopping its hosts, and ticker had not stopped/);
    expect((error as { repro: string }).repro).toBe("seed=1 policy=fifo limit=60");
    expect(sim.now()).toBe(60);
    expect(ticks).toBe(59); // at 2, 3… 60: nothing of the world runs past its limit
  });

  it("a cleanup that takes time within the limit still ends, and the run succeeds", async () => {
    const sim = new Sim({ seed: 1, limit: 60 });
    sim.host("server", function* () {
      try {
        yield* sleep(Infinity);
      } finally {
        yield* sleep(5); // a graceful shutdown
      }
    });
    sim.client("client", function* () {
      yield* sleep(1);
      return "done";
    });
    expect(await settledWithin(sim.run(), 5000)).toEqual({ ok: true, value: ["done"] });
    expect(sim.now()).toBe(6);
  });
});

describe("declaring", () => {
  it("checks its options", () => {
    expect(() => new Sim({ seed: 1.5 })).toThrow(RangeError);
    expect(() => new Sim({ policy: "lifo" as "fifo" })).toThrow(/"fifo", "random", "pct"/);
    expect(() => new Sim({ depth: 0 })).toThrow(RangeError);
    expect(() => new Sim({ steps: -1 })).toThrow(RangeError);
    expect(() => new Sim({ limit: 0 })).toThrow(RangeError);
    expect(() => new Sim({ trace: 1 as unknown as boolean })).toThrow(TypeError);
    expect(() => new Sim({ sed: 1 } as object)).toThrow(
      new TypeError('new Sim(options): unknown option "sed"; the options are seed, policy, depth, steps, trace, limit, domains'),
    );
    expect(() => new Sim({ seed: 1 }).network({ latency: -1 })).toThrow(RangeError);
    expect(() => new Sim({ seed: 1 }).network({ loss: 2 })).toThrow(RangeError);
    expect(() => new Sim({ seed: 1 }).network({ latency: { min: 2, max: 1 } })).toThrow(RangeError);
    expect(() => new Sim({ seed: 1 }).network({ jitter: 1 } as object)).toThrow(
      new TypeError('sim.network(options): unknown option "jitter"; the options are latency, loss, reorder'),
    );
    const sim = new Sim({ seed: 1 });
    sim.host("a", function* () {});
    sim.host("b", function* () {});
    expect(() => sim.link("a", "b", { loss: 0, jitter: 1 } as object)).toThrow(
      new TypeError('sim.link(a, b, options): unknown option "jitter"; the options are latency, loss, reorder'),
    );
  });

  it("checks hosts' names and mains; runs once", async () => {
    const sim = new Sim({ seed: 1 });
    const main = function* () {};
    for (const bad of ["", "10.0.0.1", "::1", "localhost", "world", "two words"]) expect(() => sim.host(bad, main)).toThrow(TypeError);
    expect(() => sim.host("a", "main" as unknown as typeof main)).toThrow(/generator function/);
    sim.host("a", main);
    expect(() => sim.client("a", main)).toThrow(/already named "a"/);
    await sim.run();
    expect(() => sim.host("b", main)).toThrow(/before sim.run/);
    await expect(sim.run()).rejects.toThrow(/runs once/);
  });

  it("one simulation at a time per thread", async () => {
    const a = new Sim({ seed: 1 });
    const b = new Sim({ seed: 2 });
    a.client("c", function* () {
      yield* sleep(1);
    });
    b.client("c", function* () {});
    const running = a.run();
    await expect(b.run()).rejects.toThrow(/another simulation is running/);
    await running;
    await b.run(); // b was never started: it can run now
  });

  it("a random seed is chosen when none is given, and named in repro", () => {
    const sim = new Sim();
    expect(Number.isSafeInteger(sim.seed)).toBe(true);
    expect(sim.repro).toBe(`seed=${sim.seed} policy=fifo`);
    expect(new Sim({ seed: 5, policy: "pct", depth: 2, steps: 50 }).repro).toBe("seed=5 policy=pct depth=2 steps=50");
  });
});

const double = B.defineTask(import.meta.url, "double", function* (n: number) {
  yield* sleep(n / 1000);
  return { n: n * 2, domain: B.Domain.self() };
});

/** A client that calls `double` on every input at once and lists the results as they come back. */
function* doubles(): Generator<B.Instruction, string, unknown> {
  const tasks = [5, 1, 3, 2].map((n) => B.call(double, n));
  const results = yield* B.parallel(double, [7, 4]);
  const called = yield* B.awaitAll(tasks);
  return [...called, ...results].map((r) => (r.ok ? `${r.value.n}@${r.value.domain}` : "failed")).join(" ");
}

describe("parallel tasks", () => {
  it("run on simulated domains (2 by default), placed from the seed, in virtual time", async () => {
    const world = async (seed: number) => {
      const sim = new Sim({ seed, trace: true });
      sim.client("c", doubles);
      const [result] = await sim.run();
      return { result: result as string, trace: String(sim.trace()), now: sim.now() };
    };
    const first = await world(3);
    const doubled = first.result.split(" ").map((x) => x.split("@"));
    expect(doubled.map(([n]) => Number(n))).toEqual([10, 2, 6, 4, 14, 8]);
    expect(new Set(doubled.map(([, d]) => Number(d)))).toEqual(new Set([1, 2]));
    expect(first.now).toBeCloseTo(0.007);
    const again = await world(3);
    expect(again.result).toBe(first.result);
    expect(again.trace).toBe(first.trace);
    const placements = new Set<string>();
    for (let seed = 1; seed <= 6; seed++) placements.add((await world(seed)).result);
    expect(placements.size).toBeGreaterThan(1);
  });

  it("the number of domains is an option, and part of the repro when not the default", async () => {
    const sim = new Sim({ seed: 4, domains: 3 });
    expect(sim.repro).toBe("seed=4 policy=fifo domains=3");
    sim.client("c", function* () {
      const r = yield* B.parallel(double, [1, 1, 1]);
      return r.map((x) => (x.ok ? x.value.domain : 0));
    });
    expect(await sim.run()).toEqual([[1, 2, 3]]);
    expect(() => new Sim({ domains: -1 })).toThrow(/domains/);
  });

  it("refuses the numbers of domains core's run refuses, naming the rule, when the world is made", () => {
    const body = function* () {};
    for (const domains of [-1, 0.5, 1025, Number.NaN]) {
      expect(() => B.run(body, { domains })).toThrow(RangeError);
      expect(() => new Sim({ domains })).toThrow(
        new RangeError(`new Sim({ domains }) must be an integer from 0 to 1024, got ${String(domains)}`),
      );
    }
    expect(new Sim({ domains: 1024 }).repro).toMatch(/ domains=1024$/);
  });

  it("a world without domains fails a call with a NoDomainAvailable that names the option", async () => {
    const sim = new Sim({ seed: 1, domains: 0 });
    sim.client("c", function* () {
      return yield* B.awaitExn(B.call(double, 21));
    });
    const error = await sim.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(B.NoDomainAvailable);
    expect((error as Error).message).toMatch(/new Sim\(\{ domains: n \}\)/);
    expect((error as Error).cause).toBeInstanceOf(B.NoDomainAvailable);
  });
});
