/**
 * A shared Condition across domains, with real worker domains. Workers run plain
 * JavaScript, so these tests use the built packages (`pnpm build` in core and
 * sync first; turbo does it before `test`) and the tasks in `fixtures/`.
 */
import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { Condition, Mutex } from "../../dist/index.js";
import { sharedCells, until } from "../helpers.js";
import * as F from "./fixtures/tasks.mjs";

describe("a shared Condition across domains", () => {
  it("broadcast wakes the waiters of every domain", async () => {
    const m = Mutex.shared();
    const c = Condition.shared();
    const cells = sharedCells(2);
    const where = await B.run(
      function* () {
        const waiters = [1, 2, 1, 2].map((pin) => B.call({ pin }, F.waitForFlag, { m, c, cells }));
        yield* until(() => Atomics.load(cells, 1) === 4);
        const woken = yield* m.protect(() => {
          Atomics.store(cells, 0, 1);
          return c.broadcast();
        });
        expect(woken).toBe(4);
        return (yield* B.awaitAll(waiters)).map((r) => (r.ok ? r.value : String(r.error)));
      },
      { domains: 2 },
    );
    expect(where).toEqual([1, 2, 1, 2]);
  });

  it("signal goes back and forth between domains (ping-pong, 200 rounds)", async () => {
    const m = Mutex.shared();
    const c = Condition.shared();
    const cells = sharedCells(1);
    const rounds = 200;
    const last = await B.run(
      function* () {
        const other = B.call({ pin: 1 }, F.pong, { m, c, cells, rounds });
        for (let i = 0; i < rounds; i++) {
          yield* m.protect(function* () {
            while (cells[0]! % 2 === 1) yield* c.wait(m);
            cells[0]!++;
            c.signal();
          });
        }
        return yield* B.awaitExn(other);
      },
      { domains: 1 },
    );
    expect(last).toBe(2 * rounds);
    expect(cells[0]).toBe(2 * rounds);
  });

  it("a waiter cancelled in another domain does not swallow a signal", async () => {
    const m = Mutex.shared();
    const c = Condition.shared();
    const a = sharedCells(2);
    const b = sharedCells(2);
    await B.run(
      function* () {
        const first = B.call({ pin: 1 }, F.waitForFlag, { m, c, cells: a });
        yield* until(() => Atomics.load(a, 1) === 1);
        const second = B.call({ pin: 2 }, F.waitForFlag, { m, c, cells: b });
        yield* until(() => Atomics.load(b, 1) === 1);
        yield* B.cancel(first);
        yield* m.protect(() => {
          Atomics.store(b, 0, 1);
          expect(c.signal()).toBe(true); // the only waiter left is the second
        });
        expect(yield* B.awaitExn(second)).toBe(2);
        expect(c.signal()).toBe(false);
      },
      { domains: 2 },
    );
  });
});
