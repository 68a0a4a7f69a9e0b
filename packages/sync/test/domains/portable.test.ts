/**
 * Shared primitives crossing domains (one object per domain; local ones
 * refuse), with real worker domains. Workers run plain JavaScript, so these
 * tests use the built packages (`pnpm build` in core and sync first; turbo
 * does it before `test`) and the tasks in `fixtures/`.
 */
import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { Broadcast, Channel, Computation, Condition, Mutex, Semaphore } from "../../dist/index.js";
import { sharedCells } from "../helpers.js";
import * as F from "./fixtures/tasks.mjs";

describe("shared primitives crossing domains", () => {
  it("is one object per domain, and comes back as the very same object", async () => {
    const m = Mutex.shared();
    const out = await B.run(
      function* () {
        return yield* B.awaitExn(B.call(F.identity, { a: m, b: m }));
      },
      { domains: 1 },
    );
    expect(out.same).toBe(true);
    expect(out.m).toBe(m);
    expect(out.nested[0]!.m).toBe(m);
  });

  it("local primitives refuse to cross, naming the shared factory", async () => {
    await B.run(
      function* () {
        expect(() => B.call(F.increment, { m: new Mutex(), cells: sharedCells(1), k: 1 })).toThrow(/Mutex\.shared\(\)/);
        expect(() => B.call(F.increment, { m: new Mutex(), cells: sharedCells(1), k: 1 })).toThrow(TypeError);
        const m = Mutex.shared();
        expect(() => B.call(F.waitForFlag, { m, c: new Condition(), cells: sharedCells(2) })).toThrow(/Condition\.shared\(\)/);
        let error: unknown;
        try {
          yield* B.parallel(F.limited, [
            { s: Semaphore.shared(1), cells: sharedCells(2), k: 1 },
            { s: new Semaphore(1), cells: sharedCells(2), k: 1 },
          ]);
        } catch (e) {
          error = e;
        }
        expect(String(error)).toMatch(/Semaphore\.shared\(n\)/);
      },
      { domains: 1 },
    );
  });

  it("a Computation refuses to cross, saying what to do instead", async () => {
    await B.run(
      function* () {
        const c = Computation.create<number>();
        expect(() => B.call(F.echo, c)).toThrow(/Computation belongs to its domain .* return the value from the parallel task/);
        expect(() => B.call(F.echo, { nested: [c] })).toThrow(TypeError);
        expect(yield* B.awaitExn(B.call(F.echo, { plain: 1 }))).toEqual({ plain: 1 });
      },
      { domains: 1 },
    );
  });

  it("channels and broadcasts refuse to cross, saying what to do instead", async () => {
    await B.run(
      function* () {
        const room = new Broadcast<number>(4);
        expect(() => B.call(F.echo, new Channel<number>(1))).toThrow(/Channel belongs to its domain .* arguments and results/);
        expect(() => B.call(F.echo, { nested: [room] })).toThrow(/Broadcast belongs to its domain/);
        const sub = room.subscribe();
        expect(() => B.call(F.echo, sub)).toThrow(/Subscription belongs to its domain/);
        sub.close();
      },
      { domains: 1 },
    );
  });
});
