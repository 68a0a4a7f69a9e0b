/**
 * Portable values: the walk over arguments and results (against the
 * sources), and values crossing real worker domains (against the built
 * package, whose workers run the fixtures in `fixtures/`).
 */
import { describe, expect, it } from "vitest";
import * as B from "../dist/index.js";
import { decodePortables, encodePortables, PORTABLE_KEY } from "../src/domains/portable.js";
import * as S from "../src/index.js";
import * as F from "./fixtures/portable-tasks.mjs";

class Box {
  constructor(readonly n: number) {}
}
S.definePortable<Box, number>("unit/Box", {
  test: (v) => v instanceof Box,
  encode: (box) => box.n,
  decode: (n) => new Box(n),
});

/** What a message goes through between domains. */
const roundTrip = (value: unknown): unknown => {
  const sent = encodePortables(value);
  return sent === value ? structuredClone(value) : decodePortables(structuredClone(sent));
};

describe("definePortable", () => {
  it("checks its arguments, and refuses a second portable under the same name", () => {
    const ok = { test: () => false, encode: (v: object) => v, decode: (d: object) => d };
    expect(() => S.definePortable("", ok)).toThrow(TypeError);
    expect(() => S.definePortable("unit/bad", { ...ok, decode: 1 } as never)).toThrow(/test\(value\), encode\(value\), decode\(data\)/);
    expect(() => S.definePortable("unit/Box", ok)).toThrow(/defined already/);
    S.definePortable("unit/twice", ok);
    expect(() => S.definePortable("unit/twice", ok)).not.toThrow(); // the same one again: nothing happens
  });
});

describe("encoding and decoding", () => {
  it("leaves values without portables alone (the very same value)", () => {
    const plain = { a: [1, { b: "c" }], d: new Uint8Array(2) };
    expect(encodePortables(plain)).toBe(plain);
    expect(encodePortables(42)).toBe(42);
    expect(encodePortables(null)).toBe(null);
  });

  it("encodes top-level values and those nested in plain arrays and objects, copying only the way to them", () => {
    const inner = { box: new Box(2), other: [1, 2] };
    const args = [new Box(1), { inner, list: [inner, 3] }, Object.assign(Object.create(null) as object, { box: new Box(3) })];
    const sent = encodePortables(args) as unknown[];
    expect(sent).not.toBe(args);
    expect(sent[0]).toEqual({ [PORTABLE_KEY]: "unit/Box", data: 1 });
    expect((args[1] as { inner: typeof inner }).inner.box).toBeInstanceOf(Box); // the original is untouched
    const got = decodePortables(structuredClone(sent)) as [Box, { inner: typeof inner; list: [typeof inner, number] }, { box: Box }];
    expect(got[0]).toEqual(new Box(1));
    expect(got[1].inner.box).toEqual(new Box(2));
    expect(got[1].list[0]).toBe(got[1].inner); // a shared reference stays shared
    expect(got[1].inner.other).toEqual([1, 2]);
    expect(got[2].box).toEqual(new Box(3));
  });

  it("does not look inside class instances, Maps or typed arrays, nor deeper than 16 levels", () => {
    class Holder {
      constructor(readonly box: Box) {}
    }
    const holder = new Holder(new Box(1));
    expect(encodePortables([holder])).toEqual([holder]);
    const map = new Map([[1, new Box(1)]]);
    expect(encodePortables([map])).toEqual([map]);
    let deep: unknown = new Box(7);
    for (let i = 0; i < 16; i++) deep = { next: deep };
    expect(roundTrip(deep)).toMatchObject({ next: {} }); // level 16 is reached
    let deeper: unknown = new Box(7);
    for (let i = 0; i < 17; i++) deeper = { next: deeper };
    expect(encodePortables(deeper)).toBe(deeper); // level 17 is not
  });

  it("keeps cycles, and closes them on the copies", () => {
    const a: Record<string, unknown> = { box: new Box(5) };
    a.self = a;
    const back = roundTrip(a) as Record<string, unknown>;
    expect(back.box).toEqual(new Box(5));
    expect(back.self).toBe(back);
    expect(a.box).toBeInstanceOf(Box); // the original is untouched
    const list: unknown[] = [];
    list.push({ list }, new Box(6));
    const out = roundTrip(list) as [{ list: unknown }, Box];
    expect(out[1]).toEqual(new Box(6));
    expect(out[0].list).toBe(out);
    const plain: Record<string, unknown> = { n: 1 };
    plain.self = plain;
    expect((roundTrip(plain) as Record<string, unknown>).self).toBeDefined();
  });

  it("decoding a kind this domain does not know is a TypeError naming it", () => {
    expect(() => decodePortables([{ [PORTABLE_KEY]: "unit/Unknown", data: 1 }])).toThrow(/"unit\/Unknown".*definePortable/);
  });
});

describe("portables across domains", () => {
  it("an argument arrives as itself over shared memory (call and parallel)", async () => {
    const counter = new F.Counter();
    const r = await B.run(
      function* () {
        const first = yield* B.awaitExn(B.call(F.bump, counter, 2));
        const rest = yield* B.parallel(F.bumpOne, [counter, counter, counter]);
        return [first, ...rest.map((x) => (x.ok ? x.value : -2))];
      },
      { domains: 2 },
    );
    expect(r[0]).toBe(2);
    expect(r.slice(1).sort()).toEqual([3, 4, 5]);
    expect(Atomics.load(counter.cells, 0)).toBe(5);
  });

  it("nested in plain arrays and objects, both ways", async () => {
    const a = new F.Counter();
    const b = new F.Counter();
    const out = await B.run(
      function* () {
        return yield* B.awaitExn(B.call(F.nested, { pair: [a, a], deep: { x: { y: b } } }));
      },
      { domains: 1 },
    );
    expect(out.kinds).toEqual([true, true, true]);
    expect(out.sum).toBe(11);
    expect(out.back[0]!.counter).toBeInstanceOf(F.Counter);
    expect(out.back[0]!.counter.cells[0]).toBe(1);
    expect(Atomics.load(b.cells, 0)).toBe(10);
  });

  it("an error a portable encodes keeps its class and fields", async () => {
    const r = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(F.throwsTagged, 7));
      },
      { domains: 1 },
    );
    const error = (r as { error: Error }).error;
    expect(error).toBeInstanceOf(F.Tagged);
    expect(error.message).toBe("tagged failure");
    expect((error as InstanceType<typeof F.Tagged>).tag).toBe(7);
  });

  it("a portable that refuses to cross fails call and parallel in the caller, and a result in the worker", async () => {
    await B.run(
      function* () {
        expect(() => B.call(F.inspect, [new F.HomeOnly()])).toThrow(/stays in its domain/);
        let error: unknown;
        try {
          yield* B.parallel(F.inspect, [1, new F.HomeOnly()]);
        } catch (e) {
          error = e;
        }
        expect(String(error)).toMatch(/stays in its domain/);
        const r = yield* B.awaitTask(B.call(F.returnsHomeOnly));
        expect(String((r as { error: Error }).error)).toMatch(/stays in its domain/);
      },
      { domains: 1 },
    );
  });

  it("a kind the worker does not define fails the call with a TypeError naming it", async () => {
    class MainOnly {}
    B.definePortable("test/MainOnly", { test: (v) => v instanceof MainOnly, encode: () => 0, decode: () => new MainOnly() });
    const r = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(F.inspect, { value: new MainOnly() }));
      },
      { domains: 1 },
    );
    const error = (r as { error: Error }).error;
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toMatch(/"test\/MainOnly"/);
  });
});

describe("a portable whose module the parallel task's module does not import", () => {
  it("crosses all the same when defined with its module's URL: the worker imports that module by itself", async () => {
    const { Tally } = await import("./fixtures/carried-portable.mjs");
    const { addThrough } = await import("./fixtures/carried-tasks.mjs");
    const tally = new Tally();
    const results = await B.run(
      function* () {
        return yield* B.awaitAll([B.call(addThrough, tally, 2), B.call(addThrough, tally, 3)]);
      },
      { domains: 2 },
    );
    expect(results.map((r) => (r.ok ? r.value.kind : String(r.error)))).toEqual(["Tally", "Tally"]);
    expect(tally.cells[0]).toBe(5);
  });

  it("defined without a URL, fails the call with a message that names the real fix", async () => {
    const { Stranger } = await import("./fixtures/carried-portable.mjs");
    const { addThrough } = await import("./fixtures/carried-tasks.mjs");
    const r = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(addThrough, new Stranger(), 1));
      },
      { domains: 1 },
    );
    expect(r.ok).toBe(false);
    const message = (r as { error: Error }).error.message;
    expect(message).toContain(
      'a value of kind "test/Stranger" came from another domain, but no portable of that name is defined in this one',
    );
    expect(message).toContain("Import that module for its side effects in the parallel task's module");
    expect(message).toContain("an import used only for types is dropped by TypeScript");
    expect(message).toContain('definePortable(import.meta.url, "test/Stranger", …)');
  });
});
