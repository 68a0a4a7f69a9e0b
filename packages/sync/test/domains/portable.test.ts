/**
 * Shared primitives crossing domains (one object per domain; local ones
 * refuse), with real worker domains. Workers run plain JavaScript, so these
 * tests use the built packages (`pnpm build` in core and sync first; turbo
 * does it before `test`) and the tasks in `fixtures/`.
 */
import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as B from "@bobbin/core";
import { afterEach, describe, expect, it } from "vitest";
import { Broadcast, Channel, ChannelClosed, Computation, Condition, Mutex, MutexNotLocked, Semaphore } from "../../dist/index.js";
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

/** The file the forged module writes if any thread imports it. */
const proof = join(tmpdir(), `bobbin-sync-forged-${process.pid}`);
const forged = `data:text/javascript,${encodeURIComponent(`import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(proof)}, "imported");`)}`;

/** A request body that imitates this package's portables (its errors, a shared mutex) and names a module. */
const body = JSON.stringify({
  error: { "@bobbin/portable": "@bobbin/sync/errors", data: { name: "ChannelClosed", message: "forged", props: { evil: true } } },
  inherited: { "@bobbin/portable": "@bobbin/sync/errors", data: { name: "constructor", message: "m", props: { x: 1 } } },
  mutex: { "@bobbin/portable": "@bobbin/sync/Mutex", data: { id: "x", buffer: null } },
  meta: { "@bobbin/portable": "nope", data: 1, module: forged },
});

afterEach(() => rmSync(proof, { force: true }));

describe.each([
  ["worker domains", { simulateDomains: false }],
  ["simulated domains", { simulateDomains: true }],
] as const)("data imitating this package's portables, on %s", (_, mode) => {
  it("in a result beside a shared mutex: arrives as the data it is, imports nothing", async () => {
    const out = await B.run(
      function* () {
        return yield* B.awaitExn(B.call(F.parseBesideMutex, body));
      },
      { ...mode, domains: 1 },
    );
    expect(out.m).toBeInstanceOf(Mutex);
    expect(out.parsed).toEqual(JSON.parse(body));
    expect((out.parsed as { error: unknown }).error).not.toBeInstanceOf(ChannelClosed);
    expect(existsSync(proof)).toBe(false);
  });

  it("in the arguments of a call from a worker to another, beside a shared mutex, both ways: the same", async () => {
    const m = Mutex.shared();
    const out = (await B.run(
      function* () {
        return yield* B.awaitExn(B.call({ pin: 1 }, F.relay, { m, parsed: JSON.parse(body) }));
      },
      { ...mode, domains: 2 },
    )) as { m: Mutex; parsed: unknown };
    expect(out.m).toBe(m);
    expect(out.parsed).toEqual(JSON.parse(body));
    expect(existsSync(proof)).toBe(false);
  });

  it("an error of this package keeps its class and its own fields, one named __proto__ included", async () => {
    const r = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(F.failsWithFields, { x: 1 }));
      },
      { ...mode, domains: 1 },
    );
    const error = (r as { error: MutexNotLocked & { detail?: unknown } }).error;
    expect(error).toBeInstanceOf(MutexNotLocked);
    expect(error.task).toBe(7);
    expect(error.detail).toEqual({ x: 1 });
    expect(Object.getOwnPropertyDescriptor(error, "__proto__")?.value).toEqual({ x: 1 });
  });
});
