import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";

const requestId = B.createContext("requestId", 0);

describe("Context", () => {
  it("a value given with `with` is seen by the task, its children and grandchildren, not by siblings", async () => {
    const seen = await B.run(function* () {
      const before = B.spawn(function* () {
        yield* B.yieldNow();
        return requestId.get();
      });
      const inside = yield* requestId.with(7, function* () {
        const child = B.spawn(function* () {
          const grandchild = B.spawn(function* () {
            yield* B.yieldNow();
            return requestId.get();
          });
          return [requestId.get(), yield* B.awaitExn(grandchild)];
        });
        yield* B.yieldNow();
        return { me: requestId.get(), family: yield* B.awaitExn(child) };
      });
      const sibling = B.spawn(function* () {
        return requestId.get();
      });
      return { before: yield* B.awaitExn(before), inside, after: requestId.get(), sibling: yield* B.awaitExn(sibling) };
    });
    expect(seen).toEqual({ before: 0, inside: { me: 7, family: [7, 7] }, after: 0, sibling: 0 });
  });

  it("a child keeps the value it was spawned with after its parent's `with` ends", async () => {
    const seen = await B.run(function* () {
      const trigger = new L.Trigger();
      const child = yield* requestId.with(3, function* () {
        return B.spawn(function* () {
          yield* trigger.wait();
          return requestId.get();
        });
      });
      trigger.signal();
      return [requestId.get(), yield* B.awaitExn(child)];
    });
    expect(seen).toEqual([0, 3]);
  });

  it("the nearest value wins; siblings spawned in different values see their own", async () => {
    const seen = await B.run(function* () {
      return yield* requestId.with(1, function* () {
        const a = B.spawn(function* () {
          return yield* requestId.with(2, function* () {
            return yield* B.awaitExn(
              B.spawn(function* () {
                return requestId.get();
              }),
            );
          });
        });
        const b = B.spawn(function* () {
          return requestId.get();
        });
        return [yield* B.awaitExn(a), yield* B.awaitExn(b), requestId.get()];
      });
    });
    expect(seen).toEqual([2, 1, 1]);
  });

  it("the value is taken back when the body throws", async () => {
    const seen = await B.run(function* () {
      try {
        yield* requestId.with(9, function* () {
          throw new RangeError("boom");
        });
      } catch (error) {
        return [(error as Error).message, requestId.get()];
      }
      return null;
    });
    expect(seen).toEqual(["boom", 0]);
  });

  it("tasks a group member spawns into its group see the member's values", async () => {
    const seen: number[] = [];
    await B.run(function* () {
      yield* B.group(function* (g) {
        g.spawn(function* () {
          yield* requestId.with(5, function* () {
            g.spawn(function* () {
              seen.push(requestId.get());
            });
          });
        });
      });
    });
    expect(seen).toEqual([5]);
  });

  it("giveContext gives a task a value from outside its body: it and the tasks it spawns see it, its parent and siblings do not", async () => {
    const tenant = B.createContext("tenant", "none");
    const off = L.onSpawn((child) => {
      if (child.name === "handler") L.giveContext(child, tenant, "acme");
    });
    try {
      const seen = await B.run(function* () {
        const handler = B.spawn(function* handler() {
          const inner = B.spawn(function* () {
            return tenant.get();
          });
          const inWith = yield* tenant.with("other", function* () {
            return tenant.get();
          });
          return [tenant.get(), yield* B.awaitExn(inner), inWith, tenant.get()];
        });
        const sibling = B.spawn(function* sibling() {
          return tenant.get();
        });
        return [yield* B.awaitExn(handler), yield* B.awaitExn(sibling), tenant.get()];
      });
      expect(seen).toEqual([["acme", "acme", "other", "acme"], "none", "none"]);
    } finally {
      off();
    }
    const task = await B.run(function* () {
      const t = B.spawn(function* () {});
      yield* B.awaitExn(t);
      return t;
    });
    expect(() => L.giveContext({} as never, tenant, "x")).toThrow(/giveContext\(task, context, value\) expects a task, got/);
    expect(() => L.giveContext(task, {} as never, "x")).toThrow(/expects a context made by B.createContext/);
    const fn = B.createContext("fn given", (): number => 0);
    expect(() => L.giveContext(task, fn, () => 1)).toThrow(B.Uncloneable);
  });

  it("refuses bad names, a taken name, a body that is not a function, a value that cannot cross, use outside a task", () => {
    expect(() => B.createContext("", 0)).toThrow(/non-empty string as name, got ""/);
    expect(() => B.createContext("requestId", 1)).toThrow(/a context of that name exists already/);
    expect(() => B.createContext("opts", 1, { crossesDomains: "yes" as never })).toThrow(/expects a boolean, got "yes"/);
    expect(() => requestId.get()).toThrow(/requestId.get\(\) must be called from inside a task/);
    expect(() => requestId.with(1, 2 as never)).toThrow(/expects a generator function as body, got number 2/);
    const fn = B.createContext("fn", (): number => 0);
    expect(() =>
      fn.with(
        () => 1,
        function* () {},
      ),
    ).toThrow(B.Uncloneable);
    expect(() =>
      fn.with(
        () => 1,
        function* () {},
      ),
    ).toThrow(/crossesDomains: false/);
    const local = B.createContext("local", (): number => 0, { crossesDomains: false });
    expect(() =>
      local.with(
        () => 1,
        function* () {},
      ),
    ).not.toThrow();
  });
});
