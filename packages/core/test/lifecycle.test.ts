import { afterEach, describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { errorOf, settle } from "./support/helpers.js";

const removers: (() => void)[] = [];
afterEach(() => {
  for (const off of removers.splice(0)) off();
});

describe("spawn and exit hooks", () => {
  it("see every spawn with its options, and every ending once", async () => {
    const spawned: [number, number, unknown][] = [];
    const ended: [number, L.Ending][] = [];
    removers.push(L.onSpawn((child, parent, options) => spawned.push([child.uid, parent.uid, options?.give])));
    removers.push(L.onExit((task, ending) => void ended.push([task.uid, ending])));
    let uids: number[] = [];
    const resource = { [L.givable]: true as const };
    await B.run(function* () {
      const a = B.spawn({ give: [resource] }, function* () {});
      const b = B.spawn(function* () {
        throw new Error("x");
      });
      const c = B.spawn(function* () {
        for (;;) yield* B.yieldNow();
      });
      uids = [B.self().uid, a.uid, b.uid, c.uid];
      yield* B.awaitTask(a);
      yield* B.awaitTask(b);
      yield* B.cancel(c);
    });
    expect(spawned.map(([child, parent]) => [child, parent])).toEqual([
      [uids[1], uids[0]],
      [uids[2], uids[0]],
      [uids[3], uids[0]],
    ]);
    expect(spawned[0]![2]).toEqual([resource]);
    expect(ended).toEqual([
      [uids[1], "resolved"],
      [uids[2], "failed"],
      [uids[3], "cancelled"],
      [uids[0], "resolved"],
    ]);
  });

  it("a spawn hook that throws cancels the spawn, in the parent", async () => {
    removers.push(
      L.onSpawn(() => {
        throw new RangeError("refused");
      }),
    );
    const error = errorOf(
      await settle(function* () {
        B.spawn(function* () {});
      }),
    );
    expect(error).toBeInstanceOf(RangeError);
  });

  it("an exit hook's veto of a normal ending fails the task and the run", async () => {
    removers.push(
      L.onExit((task, ending) => (ending === "resolved" && task.parent !== null ? new B.ResourceLeaked(task.uid, 1) : undefined)),
    );
    let child: B.Task<number> | null = null;
    const error = errorOf(
      await settle(function* () {
        child = B.spawn(function* () {
          return 1;
        });
        yield* B.awaitTask(child);
      }),
    );
    expect(error).toBeInstanceOf(B.ResourceLeaked);
    expect(child!.status).toBe("failed");
  });

  it("validates hooks", () => {
    expect(() => L.onSpawn(1 as never)).toThrow(TypeError);
    expect(() => L.onExit(null as never)).toThrow(TypeError);
  });
});

describe("a refused spawn", () => {
  it("leaves an orphans collector as it was", async () => {
    const off = L.onSpawn(() => {
      throw new RangeError("refused");
    });
    let size = -1;
    try {
      await B.run(function* () {
        const bg = B.orphans();
        try {
          B.spawn({ orphans: bg }, function* () {});
        } catch {
          size = bg.size;
        }
      });
    } finally {
      off();
    }
    expect(size).toBe(0);
  });
});
