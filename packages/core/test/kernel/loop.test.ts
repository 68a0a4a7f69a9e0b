import { describe, expect, it } from "vitest";
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";
import { errorOf, settle } from "../support/helpers.js";

describe("the run queue", () => {
  it("yield lets the task that waited longest run next (FIFO)", async () => {
    const log: string[] = [];
    const worker = function* (name: string) {
      for (let i = 0; i < 3; i++) {
        log.push(`${name}${i}`);
        yield* B.yieldNow();
      }
    };
    await B.run(function* () {
      const ts = [B.spawn(worker, "a"), B.spawn(worker, "b"), B.spawn(worker, "c")];
      yield* B.awaitAll(ts);
    });
    expect(log).toEqual(["a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"]);
  });

  it("exports yield and await under their Miou names", async () => {
    const v = await B.run(function* () {
      yield* B.yieldNow();
      const r = yield* B.awaitTask(
        B.spawn(function* () {
          return 1;
        }),
      );
      return r.ok ? r.value : 0;
    });
    expect(v).toBe(1);
  });

  it("a bare `yield` is a TypeError in the task that did it", async () => {
    const error = errorOf(
      await settle(function* () {
        yield 1 as unknown as B.Instruction;
      }),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toMatch(/yield\*/);
  });

  it("gives Node's event loop a turn while a task spins", async () => {
    let timerFired = false;
    setTimeout(() => (timerFired = true), 5);
    await B.run(
      function* () {
        const started = Date.now();
        while (!timerFired && Date.now() - started < 2000) yield* B.yieldNow();
      },
      { sliceMs: 2 },
    );
    expect(timerFired).toBe(true);
  });

  it("honours sliceMs whatever the step length: a timer waits a few long steps, not pollEvery of them", async () => {
    // Each step busy-waits 5 ms; with sliceMs 10 the loop must give Node's
    // loop a turn within a slice, so the timer fires after a handful of steps.
    let steps = 0;
    let stepsWhenFired = -1;
    await B.run(
      function* () {
        setTimeout(() => (stepsWhenFired = steps), 0);
        while (stepsWhenFired < 0 && steps < 500) {
          const until = performance.now() + 5;
          while (performance.now() < until);
          steps++;
          yield* B.yieldNow();
        }
      },
      { sliceMs: 10, pollEvery: 64 },
    );
    expect(stepsWhenFired).toBeGreaterThanOrEqual(0);
    expect(stepsWhenFired).toBeLessThanOrEqual(8);
  });

  it("validates run options, naming the option and what it takes", () => {
    const body = function* () {};
    expect(() => B.run(body, { pollEvery: 0 })).toThrow(RangeError);
    expect(() => B.run(body, { seed: 1.5 })).toThrow(RangeError);
    expect(() => L.runKernel(body, { events: {} as never })).toThrow(TypeError);
    expect(() => B.run(body, "x" as never)).toThrow(/run\(main, options\) expects an options object, got "x"/);
    expect(() => B.run(body, { workSharing: "no" } as never)).toThrow(/run\(\{ workSharing \}\) expects true or false, got "no"/);
    expect(() => B.run(body, { domains: 2 ** 53 })).toThrow(/run\(\{ domains \}\) must be an integer from 0 to 1024/);
    expect(() => B.run(body, { sliceMs: Number.NaN })).toThrow(RangeError);
    expect(() => B.run(body, { cancelGraceMs: -1 })).toThrow(RangeError);
    expect(() => L.runKernel(body, { seed: 1, random: { below: () => 0 } })).toThrow(/a seed or a random source, not both/);
    expect(() => L.runKernel(body, { policy: {} as never })).toThrow(/runKernel\(\{ policy \}\) expects \{ pick\(ready\): number \}/);
    expect(() => B.run(body, { domain: 2 } as never)).toThrow(
      `run(main, options): unknown option "domain"; the options are ${L.runOptionNames.join(", ")}`,
    );
    expect(() => L.runKernel(body, { domain: 2 } as never)).toThrow(
      `runKernel(main, options): unknown option "domain"; the options are ${L.runOptionNames.join(", ")}, events, random, policy, tracer`,
    );
    expect(() => B.run("main" as never)).toThrow(/expects a generator function/);
  });

  it("runKernel takes each seam explicitly undefined as not given", async () => {
    const seams = { events: undefined, random: undefined, policy: undefined, tracer: undefined };
    expect(
      await L.runKernel(
        function* () {
          return 7;
        },
        { ...seams, seed: undefined },
      ),
    ).toBe(7);
  });

  it("a program's run refuses the kernel's seams, pointing to runKernel", () => {
    const body = function* () {};
    for (const seam of ["events", "random", "policy", "tracer"]) {
      expect(() => B.run(body, { [seam]: {} } as never)).toThrow(
        new RegExp(`run\\(\\{ ${seam} \\}\\): .* are the seams of runtimes and backends.*runKernel of @bobbin/core/lowlevel`),
      );
    }
  });

  it("lists the seams runKernel takes and a program's run refuses (L.kernelSeamNames)", async () => {
    const body = function* () {
      return 1;
    };
    expect(Object.isFrozen(L.kernelSeamNames)).toBe(true);
    expect(() => L.runKernel(body, { domain: 2 } as never)).toThrow(
      `the options are ${[...L.runOptionNames, ...L.kernelSeamNames].join(", ")}`,
    );
    for (const seam of L.kernelSeamNames) {
      expect(() => B.run(body, { [seam]: {} } as never)).toThrow(/are the seams of runtimes and backends/);
      expect(await L.runKernel(body, { [seam]: undefined })).toBe(1);
    }
  });

  it("says which values a run takes for the options left out (L.runDefaults), as RunOptions' TSDoc does", () => {
    expect(L.runDefaults).toEqual({ pollEvery: 64, sliceMs: 10, cancelGraceMs: 3000 });
    expect(Object.isFrozen(L.runDefaults)).toBe(true);
  });

  it("settles with the root's value or error", async () => {
    expect(
      await B.run(function* () {
        return "v";
      }),
    ).toBe("v");
    await expect(
      B.run(function* () {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
  });

  it("keeps per-task state apart across runs on one thread", async () => {
    const one = B.run(function* () {
      yield* B.yieldNow();
      return B.Domain.self();
    });
    const two = B.run(function* () {
      return yield* B.awaitExn(
        B.spawn(function* () {
          return 2;
        }),
      );
    });
    expect(await Promise.all([one, two])).toEqual([0, 2]);
  });
});

describe("wakes from Node's callbacks", () => {
  /**
   * Two callbacks of one phase of Node's loop (two immediates queued together:
   * two timers would not do, as each takes the loop's time afresh and a
   * millisecond may pass between them) each wake a task; returns who ran in
   * what order.
   */
  async function twoTimersWake(batchWakes: boolean | undefined): Promise<string[]> {
    const order: string[] = [];
    const events: L.Events = { select: () => [], interrupt() {}, ...(batchWakes === undefined ? {} : { batchWakes }) };
    await L.runKernel(
      function* () {
        const a = new L.Trigger();
        const b = new L.Trigger();
        const waiter = (t: L.Trigger, name: string) =>
          B.spawn(function* () {
            yield* t.wait();
            order.push(`${name} ran`);
          });
        const tasks = [waiter(a, "a"), waiter(b, "b")];
        yield* B.yieldNow(); // both wait
        // Queued together: Node runs both in its next check phase, with microtasks between them.
        setImmediate(() => {
          order.push("callback 1");
          a.signal();
        });
        setImmediate(() => {
          order.push("callback 2");
          b.signal();
        });
        yield* B.awaitAll(tasks);
      },
      { events: () => events },
    );
    return order;
  }

  it("run after each callback by default (a microtask)", async () => {
    expect(await twoTimersWake(undefined)).toEqual(["callback 1", "a ran", "callback 2", "b ran"]);
  });

  it("run together after the phase when the backend batches wakes (one slice for the batch)", async () => {
    expect(await twoTimersWake(true)).toEqual(["callback 1", "callback 2", "a ran", "b ran"]);
  });
});
