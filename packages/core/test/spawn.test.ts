import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { errorOf, settle, sleepMs } from "./support/helpers.js";

describe("spawn", () => {
  it("queues the child: the parent runs until it suspends", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const child = B.spawn(function* () {
        log.push("child");
      });
      log.push("parent before await");
      yield* B.awaitExn(child);
      log.push("parent after await");
    });
    expect(log).toEqual(["parent before await", "child", "parent after await"]);
  });

  it("passes arguments to the body", async () => {
    const sum = function* (a: number, b: number) {
      return a + b;
    };
    expect(
      await B.run(function* () {
        return yield* B.awaitExn(B.spawn(sum, 20, 22));
      }),
    ).toBe(42);
  });

  it("takes options first", async () => {
    const value = await B.run(function* () {
      const bg = B.orphans<string>();
      const t = B.spawn(
        { orphans: bg },
        function* (s: string) {
          return s;
        },
        "hi",
      );
      return yield* B.awaitExn(t);
    });
    expect(value).toBe("hi");
  });

  it("rejects a plain function with a TypeError that says what to write", async () => {
    const error = errorOf(
      await settle(function* () {
        B.spawn((() => 1) as unknown as B.TaskBody<[], number>);
      }),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toMatch(/function\*/);
  });

  it("runs a body that returns an operation, as its type says (B.TaskBody): a generator or any operation", async () => {
    const seven: B.Operation<number> = {
      *[Symbol.iterator]() {
        yield* B.yieldNow();
        return 7;
      },
    };
    function* twice(n: number): Generator<B.Instruction, number, unknown> {
      yield* B.yieldNow();
      return 2 * n;
    }
    const value = await B.run(function* () {
      const fromOperation = B.spawn((): B.Operation<number> => seven);
      const fromGenerator = B.spawn((n: number): B.Operation<number> => twice(n), 4);
      const fromYield = B.spawn((): B.Operation<void> => B.yieldNow());
      yield* B.awaitExn(fromYield);
      return [yield* B.awaitExn(fromOperation), yield* B.awaitExn(fromGenerator)];
    });
    expect(value).toEqual([7, 8]);
  });

  it("rejects non-functions and bad options", async () => {
    const errors = await B.run(function* () {
      const tries = [
        () => B.spawn(42 as unknown as B.TaskBody<[], void>),
        () => B.spawn({ orphans: {} } as unknown as B.SpawnOptions, function* () {}),
        () => B.spawn({ give: "x" } as unknown as B.SpawnOptions, function* () {}),
      ];
      return tries.map((f) => {
        try {
          f();
          return null;
        } catch (e) {
          return e;
        }
      });
    });
    for (const e of errors) expect(e).toBeInstanceOf(TypeError);
  });

  it("refuses an option it does not have, naming it and the ones there are: a typo never spawns a plain child", async () => {
    const messages = await B.run(function* () {
      const bg = B.orphans<void>();
      const tries = [
        function* () {
          B.spawn({ orphan: bg } as unknown as B.SpawnOptions, function* () {});
        },
        function* () {
          B.call({ pinned: 1 } as unknown as B.CallOptions, undefined as never); // the options are checked before the task
        },
        function* () {
          yield* B.group(function* (g) {
            g.spawn({ nam: "x" } as unknown as B.GroupSpawnOptions, function* () {});
          });
        },
      ];
      const out: string[] = [];
      for (const f of tries) {
        try {
          yield* f();
          out.push("no error");
        } catch (e) {
          out.push(`${(e as Error).name}: ${(e as Error).message}`);
        }
      }
      return out;
    });
    expect(messages).toEqual([
      'TypeError: spawn(options, …): unknown option "orphan"; the options are orphans, give, name',
      'TypeError: call(options, …): unknown option "pinned"; the options are orphans, give, name, pin, transfer',
      'TypeError: g.spawn(options, …): unknown option "nam"; the options are orphans, give, name',
    ]);
  });

  it("names a task after its body, or as spawn({ name }) says; errors say name#uid", async () => {
    await B.run(function* main() {
      const a = B.spawn(function* parser() {});
      const b = B.spawn({ name: "config-loader" }, function* () {});
      const c = B.spawn(function* () {});
      expect([B.self().name, a.name, b.name, c.name]).toEqual(["main", "parser", "config-loader", "anonymous"]);
      expect(String(a)).toBe(`parser#${a.uid}`);
      yield* B.awaitAll([a, b, c]);
      expect(a.name).toBe("parser"); // ended tasks keep their name
      expect(() => B.spawn({ name: "" }, function* () {})).toThrow(/spawn\(\{ name \}\) expects a non-empty string/);
    });
  });

  it("says what to do when given a generator object instead of its function", async () => {
    await B.run(function* () {
      function* body() {}
      expect(() => B.spawn(body() as never)).toThrow(/a generator object \(the generator function was called: pass the function itself/);
    });
  });

  it("is a TypeError outside a task", () => {
    expect(() => B.spawn(function* () {})).toThrow(/inside a task/);
  });

  it("gives each task a distinct uid and a parent", async () => {
    await B.run(function* () {
      const me = B.self();
      const a = B.spawn(function* () {});
      const b = B.spawn(function* () {});
      expect(a.uid).not.toBe(b.uid);
      expect(a.parent).toBe(me);
      expect(me.parent).toBeNull();
      expect(a.status).toBe("pending");
      yield* B.awaitAll([a, b]);
      expect(a.status).toBe("resolved");
    });
  });
});

describe("spawnSystem", () => {
  it("runs a task beside the root: no parent, not the root's child, cancelled when the root ends, before run settles", async () => {
    const log: string[] = [];
    const trigger = new L.Trigger();
    let system: B.Task<unknown> | null = null;
    const value = await B.run(function* () {
      system = L.spawnSystem(function* (tag: string) {
        log.push(`${tag} starts, parent ${String(B.self().parent)}`);
        try {
          yield* trigger.wait();
        } finally {
          log.push(`${tag} cleans up`);
        }
      }, "system");
      yield* B.yieldNow();
      const notAChild = yield* (function* () {
        try {
          yield* B.awaitTask(system!);
        } catch (error) {
          return error;
        }
      })();
      expect(notAChild).toBeInstanceOf(B.NotAChild);
      log.push("root returns");
      return 42; // with a system task still waiting: not StillHasChildren
    });
    log.push("run settled");
    expect(value).toBe(42);
    expect(system!.status).toBe("cancelled");
    expect(log).toEqual(["system starts, parent null", "root returns", "system cleans up", "run settled"]);
  });

  it("its failure fails the run with its error and cancels the root", async () => {
    let rootCancelled = false;
    const r = await settle(function* () {
      L.spawnSystem(function* () {
        yield* B.yieldNow();
        throw new Error("system task failed");
      });
      try {
        yield* sleepMs(10_000);
      } catch (error) {
        rootCancelled = error instanceof B.Cancelled;
        throw error;
      }
    });
    expect((errorOf(r) as Error).message).toBe("system task failed");
    expect(rootCancelled).toBe(true);
  });

  it("keeps the rules of the tree below it, and is a TypeError outside a task", async () => {
    const r = await settle(function* () {
      const system = L.spawnSystem(function* () {
        B.spawn(function* () {});
      });
      yield* sleepMs(10);
      return system.uid;
    });
    expect(errorOf(r)).toBeInstanceOf(B.StillHasChildren);
    expect(() => L.spawnSystem(function* () {})).toThrow(/inside a task/);
  });
});
