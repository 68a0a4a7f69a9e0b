import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { errorOf, settle } from "./support/helpers.js";

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
      yield* B.yield();
      const r = yield* B.await(
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

  it("validates run options", () => {
    expect(() => B.run(function* () {}, { pollEvery: 0 })).toThrow(RangeError);
    expect(() => B.run(function* () {}, { seed: 1.5 })).toThrow(RangeError);
    expect(() => B.run(function* () {}, { events: {} as never })).toThrow(TypeError);
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
