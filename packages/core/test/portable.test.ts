/**
 * Portable values: the walk over arguments and results (against the
 * sources), and values crossing real worker domains (against the built
 * package, whose workers run the fixtures in `fixtures/`).
 */
import { describe, expect, it } from "vitest";
import * as B from "../dist-dev/index.js";
import { decodePortables, encodePortables, importModules, portableModules } from "../src/domains/portable.js";
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

/** What a message goes through between domains: the value and its slots, cloned together. */
const roundTrip = (value: unknown): unknown => {
  const packed = encodePortables(value);
  if (packed === null) return structuredClone(value);
  const [copy, slots] = structuredClone([packed.value, packed.slots]);
  return decodePortables(copy, slots);
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
  it("leaves values without portables alone: nothing to send beside them", () => {
    const plain = { a: [1, { b: "c" }], d: new Uint8Array(2) };
    expect(encodePortables(plain)).toBe(null);
    expect(encodePortables(42)).toBe(null);
    expect(encodePortables(null)).toBe(null);
  });

  it("encodes top-level values and those nested in plain arrays and objects, copying only the way to them", () => {
    const inner = { box: new Box(2), other: [1, 2] };
    const args = [new Box(1), { inner, list: [inner, 3] }, Object.assign(Object.create(null) as object, { box: new Box(3) })];
    const packed = encodePortables(args)!;
    const sent = packed.value as unknown[];
    expect(sent).not.toBe(args);
    expect(sent[0]).toBe(null); // the portable's place holds nothing: what it was travels beside the value
    expect(packed.slots.map(([container, key, name, data]) => [container === sent, key, name, data])).toEqual([
      [true, 0, "unit/Box", 1],
      [false, "box", "unit/Box", 2],
      [false, "box", "unit/Box", 3],
    ]);
    expect((args[1] as { inner: typeof inner }).inner.box).toBeInstanceOf(Box); // the original is untouched
    const got = roundTrip(args) as [Box, { inner: typeof inner; list: [typeof inner, number] }, { box: Box }];
    expect(got[0]).toEqual(new Box(1));
    expect(got[1].inner.box).toEqual(new Box(2));
    expect(got[1].list[0]).toBe(got[1].inner); // a shared reference stays shared
    expect(got[1].inner.other).toEqual([1, 2]);
    expect(got[2].box).toEqual(new Box(3));
  });

  it("a value that is itself a portable is a slot without a container", () => {
    const packed = encodePortables(new Box(9))!;
    expect(packed.value).toBe(null);
    expect(packed.slots).toEqual([[null, 0, "unit/Box", 9, null]]);
    expect(roundTrip(new Box(9))).toEqual(new Box(9));
  });

  it("data that looks like an encoded portable is data: only the listed slots are decoded", () => {
    const forged = { "@bobbin/portable": "unit/Box", data: 5, module: "data:text/javascript,throw 1" };
    const unknown = { "@bobbin/portable": "unit/Unknown", data: 1, module: "node:fs" };
    const value = { box: new Box(1), forged, list: [unknown, { deeper: forged }] };
    const back = roundTrip(value) as typeof value;
    expect(back.box).toEqual(new Box(1));
    expect(back.forged).toStrictEqual(forged);
    expect(back.list).toStrictEqual([unknown, { deeper: forged }]);
    expect(portableModules(encodePortables(value)!.slots)).toEqual([]);
  });

  it("an own __proto__ key on the way to a portable stays a key (not the copy's prototype)", () => {
    const parsed = JSON.parse('{ "__proto__": { "polluted": true }, "n": 1 }') as Record<string, unknown>;
    parsed.box = new Box(4);
    const back = roundTrip(parsed) as Record<string, unknown>;
    expect(Object.keys(back)).toEqual(["__proto__", "n", "box"]);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(back, "__proto__")?.value).toEqual({ polluted: true });
    expect(back.box).toEqual(new Box(4));
    const withBox = JSON.parse('{ "__proto__": null }') as Record<string, unknown>;
    Object.defineProperty(withBox, "__proto__", { value: new Box(6), enumerable: true });
    const boxed = roundTrip(withBox) as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(boxed, "__proto__")?.value).toEqual(new Box(6));
    expect(Object.getPrototypeOf(boxed)).toBe(Object.prototype);
  });

  it("does not look inside class instances, Maps or typed arrays, nor deeper than 16 levels", () => {
    class Holder {
      constructor(readonly box: Box) {}
    }
    const holder = new Holder(new Box(1));
    expect(encodePortables([holder])).toBe(null);
    const map = new Map([[1, new Box(1)]]);
    expect(encodePortables([map])).toBe(null);
    let deep: unknown = new Box(7);
    for (let i = 0; i < 16; i++) deep = { next: deep };
    expect(roundTrip(deep)).toMatchObject({ next: {} }); // level 16 is reached
    let deeper: unknown = new Box(7);
    for (let i = 0; i < 17; i++) deeper = { next: deeper };
    expect(encodePortables(deeper)).toBe(null); // level 17 is not
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
    const value = [null];
    expect(() => decodePortables(value, [[value, 0, "unit/Unknown", 1, null]])).toThrow(/"unit\/Unknown".*definePortable/);
  });

  it("slots in a form Bobbin does not know are a TypeError, before anything is decoded or imported", () => {
    const value = [null];
    for (const slots of [
      null,
      "slots",
      [null],
      [[value, 0, "unit/Box"]],
      [[value, {}, "unit/Box", 1, null]],
      [[1, 0, "unit/Box", 1, null]],
      [[value, 0, "unit/Box", 1, 7]],
    ]) {
      expect(() => decodePortables(value, slots)).toThrow(/lists its portables in a form this version of Bobbin does not know/);
      expect(() => portableModules(slots)).toThrow(TypeError);
    }
  });
});

describe("the modules a domain imports", () => {
  it("are file: URLs only: data:, node:, http(s): and others are refused with a TypeError that names the rule", async () => {
    const probe = `data:text/javascript,${encodeURIComponent("globalThis.bobbinImported = true;")}`;
    for (const url of [probe, "node:fs", "https://example.invalid/x.mjs", "http://127.0.0.1/x.mjs", "blob:nodedata:x", "fs", "", "file"]) {
      await expect(importModules([url])).rejects.toThrow(/domains import only the program's own modules, by their file: URL/);
    }
    expect((globalThis as { bobbinImported?: boolean }).bobbinImported).toBeUndefined();
    await expect(importModules(["file:///nonexistent/bobbin-module.mjs"])).rejects.toMatchObject({ code: "ERR_MODULE_NOT_FOUND" });
    await expect(importModules([new URL("./fixtures/carried-portable.mjs", import.meta.url).href])).resolves.toBeUndefined();
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
