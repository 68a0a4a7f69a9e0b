/** Task groups: every task awaited, fail-fast, one-wave cancel, a limit, real child tasks. */
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { cleanups, errorOf, parked, settle, settleOperation, yieldTimes } from "./support/helpers.js";

function* failAfter(n: number, error: unknown): Generator<B.Instruction, never, unknown> {
  yield* yieldTimes(n);
  throw error;
}

describe("group", () => {
  it("returns the body's value once the body and every task have ended", async () => {
    const log: string[] = [];
    const value = await B.run(function* () {
      const v = yield* B.group(function* (g) {
        g.spawn(function* () {
          yield* yieldTimes(5);
          log.push("slow task");
        });
        g.spawn(function* () {
          log.push("fast task");
        });
        log.push("body returns");
        return 42;
      });
      log.push("group returned");
      return v;
    });
    expect(value).toBe(42);
    expect(log).toEqual(["body returns", "fast task", "slow task", "group returned"]);
  });

  it("makes the body and every task children of the caller, with names and trace points", async () => {
    const spawned: string[] = [];
    await L.runKernel(
      function* main() {
        const owner = B.self();
        yield* B.group({ name: "acceptor" }, function* (g) {
          expect(B.self().parent).toBe(owner);
          const t = g.spawn(function* worker() {
            expect(B.self().parent).toBe(owner);
            // A task of the group spawns into it too: the new task is the owner's child as well.
            const u = g.spawn({ name: "helper" }, function* () {});
            expect(u.parent).toBe(owner);
          });
          expect(t.parent).toBe(owner);
          expect(t.name).toBe("worker");
        });
      },
      { tracer: { spawn: (task, parent) => spawned.push(`${parent.name} → ${task.name}`) } },
    );
    expect(spawned).toEqual(["main → acceptor", "main → worker", "main → helper"]);
  });

  it("a task of the group is awaited by the group: the body may not await it", async () => {
    const r = await settle(function* () {
      yield* B.group(function* (g) {
        const t = g.spawn(function* () {});
        yield* B.awaitExn(t);
      });
    });
    expect(errorOf(r)).toBeInstanceOf(B.NotAChild);
  });

  it("the first failure of a task cancels the body and the other tasks, awaits their cleanup, and is thrown", async () => {
    const log: string[] = [];
    const boom = new Error("boom");
    const r = await settle(function* () {
      try {
        yield* B.group(function* (g) {
          g.spawn(parked, log, "a");
          g.spawn(failAfter, 2, boom);
          g.spawn(failAfter, 6, new Error("later, while cancelled: not thrown"));
          yield* parked(log, "body");
        });
      } finally {
        log.push("group returned");
      }
    });
    expect(errorOf(r)).toBe(boom);
    expect(log.slice(-1)).toEqual(["group returned"]);
    expect(cleanups(log.slice(0, -1)).sort()).toEqual(["a cleaned", "body cleaned"]);
  });

  it("the body's failure cancels the tasks and is thrown", async () => {
    const log: string[] = [];
    const boom = new Error("body");
    const r = await settle(function* () {
      yield* B.group(function* (g) {
        g.spawn(parked, log, "a");
        yield* B.yieldNow();
        throw boom;
      });
    });
    expect(errorOf(r)).toBe(boom);
    expect(cleanups(log)).toEqual(["a cleaned"]);
  });

  it("a failure after the body returned still fails the group", async () => {
    const boom = new Error("late");
    const r = await settleOperation(
      B.group(function* (g) {
        g.spawn(failAfter, 3, boom);
        return "body done";
      }),
    );
    expect(errorOf(r)).toBe(boom);
  });

  it("g.cancel() cancels every task in one wave; the body goes on and its value is returned", async () => {
    const log: string[] = [];
    const value = await B.run(function* () {
      return yield* B.group(function* (g) {
        for (let i = 0; i < 3; i++) g.spawn(parked, log, `t${i}`);
        yield* yieldTimes(2);
        expect(g.running).toBe(3);
        g.cancel();
        log.push("body after cancel");
        // Tasks spawned after the wave run normally.
        g.spawn(function* () {
          log.push("spawned after cancel");
        });
        return "body value";
      });
    });
    expect(value).toBe("body value");
    const after = cleanups(log);
    expect(after[0]).toBe("body after cancel");
    expect(after.slice(1).sort()).toEqual(["spawned after cancel", "t0 cleaned", "t1 cleaned", "t2 cleaned"]);
  });

  it("g.spawn once the group has ended is a TypeError", async () => {
    let kept: B.Group | null = null;
    const r = await settle(function* () {
      yield* B.group(function* (g) {
        kept = g;
      });
      kept!.spawn(function* () {});
    });
    expect(errorOf(r)).toBeInstanceOf(TypeError);
    expect((errorOf(r) as Error).message).toMatch(/has ended/);
  });

  it("refuses bad options and bodies", async () => {
    for (const limit of [0, -1, 1.5, Number.NaN, "8"]) {
      expect(errorOf(await settleOperation(B.group({ limit: limit as number }, function* () {})))).toBeInstanceOf(RangeError);
    }
    expect(() => B.group(42 as never)).toThrow(TypeError);
    expect(errorOf(await settleOperation(B.group({}, 42 as never)))).toBeInstanceOf(TypeError);
    expect(() => B.group(null as never, function* () {})).toThrow(TypeError);
    const r = await settleOperation(
      B.group(function* (g) {
        g.spawn({ orphans: B.orphans() } as never, function* () {});
      }),
    );
    expect((errorOf(r) as Error).message).toMatch(/orphans/);
  });
});

describe("group({ limit })", () => {
  it("runs at most `limit` tasks at once, the others in the order they were spawned", async () => {
    const started: number[] = [];
    let running = 0;
    let most = 0;
    await B.run(function* () {
      yield* B.group({ limit: 3 }, function* (g) {
        for (let i = 0; i < 10; i++) {
          g.spawn(function* () {
            started.push(i);
            most = Math.max(most, ++running);
            yield* yieldTimes(1 + (i % 3));
            running--;
          });
        }
        expect(g.waiting).toBe(7);
      });
    });
    expect(most).toBe(3);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("waiting tasks never start after a failure", async () => {
    const started: number[] = [];
    const boom = new Error("boom");
    const r = await settleOperation(
      B.group({ limit: 2 }, function* (g) {
        g.spawn(failAfter, 1, boom);
        for (let i = 0; i < 5; i++) {
          g.spawn(function* () {
            started.push(i);
            yield* new L.Trigger().wait();
          });
        }
      }),
    );
    expect(errorOf(r)).toBe(boom);
    expect(started).toEqual([0]);
  });

  it("waiting tasks never start after g.cancel()", async () => {
    const started: number[] = [];
    await B.run(function* () {
      yield* B.group({ limit: 2 }, function* (g) {
        for (let i = 0; i < 6; i++) {
          g.spawn(function* () {
            started.push(i);
            yield* new L.Trigger().wait();
          });
        }
        yield* yieldTimes(2);
        g.cancel();
        expect(g.waiting).toBe(0);
      });
    });
    expect(started).toEqual([0, 1]);
  });
});

describe("cancelling the caller of a group", () => {
  /** Cancels the task running `group` once `ready(g, log)` holds, and returns the log without its "waits" lines. */
  async function cancelWhen(
    body: (g: B.Group, log: string[]) => Generator<B.Instruction, void, unknown>,
    ready: (g: B.Group, log: string[]) => boolean,
    options: B.GroupOptions = {},
  ): Promise<string[]> {
    const log: string[] = [];
    let group: B.Group | null = null;
    await B.run(function* () {
      const caller = B.spawn(function* () {
        try {
          yield* B.group(options, function* (g) {
            group = g;
            yield* body(g, log);
          });
        } finally {
          log.push("caller unwinds");
        }
      });
      for (let i = 0; i < 100 && (group === null || !ready(group, log)); i++) yield* B.yieldNow();
      expect(group === null ? false : ready(group, log)).toBe(true);
      yield* B.cancel(caller);
      expect(caller.status).toBe("cancelled");
    });
    return cleanups(log);
  }

  const waiting = (log: string[]): number => log.filter((line) => line.endsWith(" waits")).length;

  it("while the body and its tasks wait: all cancelled, all cleaned up before Cancelled reaches the caller", async () => {
    const log = await cancelWhen(
      function* (g, log) {
        g.spawn(parked, log, "a");
        g.spawn(parked, log, "b");
        yield* parked(log, "body");
      },
      (_g, log) => waiting(log) === 3,
    );
    expect(log.at(-1)).toBe("caller unwinds");
    expect(log.slice(0, -1).sort()).toEqual(["a cleaned", "b cleaned", "body cleaned"]);
  });

  it("after the body returned, while its tasks run", async () => {
    const log = await cancelWhen(
      function* (g, log) {
        g.spawn(parked, log, "a");
      },
      (_g, log) => waiting(log) === 1,
    );
    expect(log).toEqual(["a cleaned", "caller unwinds"]);
  });

  it("before the tasks started: they never run", async () => {
    const log = await cancelWhen(
      function* (g, log) {
        g.spawn(parked, log, "a");
        yield* parked(log, "body");
      },
      (_g, log) => waiting(log) === 1,
    );
    expect(log).toEqual(["body cleaned", "caller unwinds"]);
  });

  it("while tasks wait for a place under the limit: they never start", async () => {
    const log = await cancelWhen(
      function* (g, log) {
        for (let i = 0; i < 4; i++) g.spawn(parked, log, `t${i}`);
      },
      (g, log) => waiting(log) === 1 && g.waiting === 3,
      { limit: 1 },
    );
    expect(log).toEqual(["t0 cleaned", "caller unwinds"]);
  });

  it("while a task's cleanup suspends: the group still waits for it", async () => {
    const log = await cancelWhen(
      function* (g, log) {
        g.spawn(function* () {
          log.push("task waits");
          try {
            yield* new L.Trigger().wait();
          } finally {
            yield* yieldTimes(10);
            log.push("slow cleanup done");
          }
        });
      },
      (_g, log) => waiting(log) === 1,
    );
    expect(log).toEqual(["slow cleanup done", "caller unwinds"]);
  });

  it("a task spawned while the group is being cancelled never starts", async () => {
    const log = await cancelWhen(
      function* (g, log) {
        try {
          yield* parked(log, "body");
        } finally {
          g.spawn(function* () {
            log.push("must not run");
          });
        }
      },
      (_g, log) => waiting(log) === 1,
    );
    expect(log).toEqual(["body cleaned", "caller unwinds"]);
  });
});

describe("spawn hooks see who spawned into a group", () => {
  it("the spawner is the task that called g.spawn; the parent is the group's owner", async () => {
    const seen: string[] = [];
    const off = L.onSpawn((child, parent, _options, spawner) => {
      if (child.name === "job") seen.push(`${parent.name}/${spawner.name}`);
    });
    try {
      await B.run(function* root() {
        yield* B.group({ name: "body" }, function* (g) {
          g.spawn(function* job() {});
        });
      });
    } finally {
      off();
    }
    expect(seen).toEqual(["root/body"]);
  });
});
