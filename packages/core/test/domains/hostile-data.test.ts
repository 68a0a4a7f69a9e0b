/**
 * Data from outside crossing domains: a parsed request body beside a
 * portable, in results, arguments and nested calls; errors named after
 * inherited keys. Such data crosses as the plain data it is, on worker
 * domains and on simulated ones: nothing in it is read as a portable, and no
 * module it names is imported. (Workers run the package's development build and the tasks
 * of `fixtures/hostile.mjs`.)
 */
import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import * as B from "../../dist-dev/index.js";
import * as F from "./fixtures/hostile.mjs";

/** The file the forged module writes, and the global it sets, when it is imported (in any thread). */
const proof = join(tmpdir(), `bobbin-forged-${process.pid}`);
const forged =
  "data:text/javascript," +
  encodeURIComponent(
    `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(proof)}, "imported"); globalThis.bobbinForged = true;`,
  );
const imported = (): boolean => existsSync(proof) || (globalThis as { bobbinForged?: boolean }).bobbinForged === true;

/**
 * A request body as any client may send it: markers naming an unknown kind
 * with a module to import, the portable of the tasks' module, a portable of
 * another package, nested ones, and a `__proto__` key (an own property once parsed).
 */
const body = `{
  "item": "book",
  "meta": { "@bobbin/portable": "nope", "data": 1, "module": ${JSON.stringify(forged)} },
  "counter": { "@bobbin/portable": "hostile/Counter", "data": 4, "module": ${JSON.stringify(forged)} },
  "sync": { "@bobbin/portable": "@bobbin/sync/errors", "data": { "name": "constructor", "message": "m", "props": { "x": 1 } } },
  "list": [{ "@bobbin/portable": "nope", "data": { "@bobbin/portable": "nope", "data": [], "module": "node:fs" } }],
  "__proto__": { "@bobbin/portable": "hostile/Counter", "data": 1 }
}`;
const parsed = (): unknown => JSON.parse(body);

/**
 * A value as nested arrays of its own keys and values, with whether each
 * container has the ordinary prototype: compared without reading a key such
 * as `constructor` as anything but data (the matchers' own equality does).
 */
function shape(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return ["array", Object.getPrototypeOf(value) === Array.prototype, value.map(shape)];
  const own = Object.keys(value).map((key) => [key, shape(Object.getOwnPropertyDescriptor(value, key)!.value)]);
  return ["object", Object.getPrototypeOf(value) === Object.prototype, own];
}

afterEach(() => {
  rmSync(proof, { force: true });
  delete (globalThis as { bobbinForged?: boolean }).bobbinForged;
});

describe.each([
  ["worker domains", { simulateDomains: false }],
  ["simulated domains", { simulateDomains: true }],
] as const)("forged portable markers on %s", (_, mode) => {
  it("in a result beside a real portable: the object arrives intact, nothing is imported", async () => {
    const out = await B.run(
      function* () {
        return yield* B.awaitExn(B.call(F.parseBeside, body));
      },
      { ...mode, domains: 1 },
    );
    expect(out.counter).toBeInstanceOf(F.Counter);
    expect(shape(out.parsed)).toStrictEqual(shape(parsed()));
    expect(Object.keys(out.parsed as object)).toContain("__proto__");
    expect(imported()).toBe(false);
  });

  it("in a call's arguments beside a real portable: the task gets the object intact, nothing is imported", async () => {
    const out = await B.run(
      function* () {
        return yield* B.awaitExn(B.call(F.seen, new F.Counter(), parsed()));
      },
      { ...mode, domains: 1 },
    );
    expect(out.counter).toBe(true);
    expect(shape(out.value)).toStrictEqual(shape(parsed()));
    expect(imported()).toBe(false);
  });

  it("between workers, with a portable both ways (a nested call): intact, nothing imported", async () => {
    const out = await B.run(
      function* () {
        return yield* B.awaitExn(B.call({ pin: 1 }, F.relay, new F.Counter(), parsed()));
      },
      { ...mode, domains: 2 },
    );
    expect(out.counter).toBe(true);
    expect(shape(out.value)).toStrictEqual(shape(parsed()));
    expect(imported()).toBe(false);
  });

  it("in a failed task's error, as own properties and as its cause: plain data", async () => {
    const r = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(F.failsNamed, "BadRequest", parsed()));
      },
      { ...mode, domains: 1 },
    );
    const error = (r as { error: Error & { extra?: unknown } }).error;
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("BadRequest");
    expect(shape(error.extra)).toStrictEqual(shape(parsed()));
    expect(shape(error.cause)).toStrictEqual(shape(parsed()));
    expect(imported()).toBe(false);
  });

  it("an error with an own property named __proto__ keeps its class, and the property", async () => {
    const r = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(F.failsWithFields, parsed()));
      },
      { ...mode, domains: 1 },
    );
    const error = (r as { error: Error & { detail?: unknown } }).error;
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe("with fields");
    expect(shape(error.detail)).toStrictEqual(shape(parsed()));
    expect(shape(Object.getOwnPropertyDescriptor(error, "__proto__")?.value)).toStrictEqual(shape(parsed()));
  });

  it.each(["toString", "__proto__", "constructor", "valueOf", "hasOwnProperty"])(
    "an error named %s crosses as an ordinary error with its name and message",
    async (name) => {
      const r = await B.run(
        function* () {
          return yield* B.awaitTask(B.call(F.failsNamed, name));
        },
        { ...mode, domains: 1 },
      );
      expect(r.ok).toBe(false);
      const error = (r as { error: Error }).error;
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
      expect(error.message).toBe(`failed as ${name}`);
    },
  );

  it("an error named __proto__ that fails the run from a worker's system task fails the run with it", async () => {
    const failure = await B.run(
      function* () {
        yield* B.awaitTask(B.call(F.fatalNamed, "__proto__"));
      },
      { ...mode, domains: 1 },
    ).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).name).toBe("__proto__");
    expect((failure as Error).message).toBe("fatal as __proto__");
  });
});

describe("the modules a call names", () => {
  it("come only from defineTask: an object of the same shape is refused by call and parallel, before anything is sent", async () => {
    const imitation = { url: forged, name: "imitation", body: function* () {} };
    await B.run(
      function* () {
        expect(() => B.call(imitation as never)).toThrow(/call expects a task made by B\.defineTask/);
        expect(() => B.call({ pin: 1 }, imitation as never)).toThrow(/call expects a task made by B\.defineTask/);
        let refused: unknown;
        try {
          yield* B.parallel(imitation as never, [1]);
        } catch (error) {
          refused = error;
        }
        expect(String(refused)).toMatch(/parallel expects a task made by B\.defineTask/);
      },
      { domains: 1 },
    );
    expect(imported()).toBe(false);
  });

  it("a worker refuses a task module that is not a file: URL, failing the call with a TypeError that names the rule", async () => {
    const inData = B.defineTask(forged, "inData", function* () {
      return 1;
    });
    const r = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(inData));
      },
      { domains: 1 },
    );
    expect(r.ok).toBe(false);
    const error = (r as { error: Error }).error;
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toMatch(/domains import only the program's own modules, by their file: URL/);
    expect(imported()).toBe(false);
  });
});

/** Keys that data may have and that mean something to a decoder or to `Object.prototype`. */
const keys = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom(
    "@bobbin/portable",
    "data",
    "module",
    "name",
    "props",
    "__proto__",
    "constructor",
    "toString",
    "valueOf",
    "hasOwnProperty",
  ),
);

/** An object with these entries as own properties (`__proto__` included: as JSON.parse makes them). */
function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

/** JSON-like values, with forged markers (named after unknown, registered and inherited kinds) anywhere in them. */
const { value: jsonLike } = fc.letrec<{ value: unknown; marker: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.string({ maxLength: 8 }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.array(fc.tuple(keys, tie("value")), { maxLength: 4 }).map(objectOf),
    tie("marker"),
  ),
  marker: fc.record(
    {
      "@bobbin/portable": fc.constantFrom("nope", "hostile/Counter", "@bobbin/sync/errors", "__proto__", "constructor", "toString"),
      data: tie("value"),
      module: fc.constantFrom(forged, "node:fs", "https://example.invalid/x.mjs", "file:///nonexistent/x.mjs"),
    },
    { requiredKeys: ["@bobbin/portable"], noNullPrototype: true },
  ),
}));

describe("random JSON-like values cross both ways unchanged", () => {
  /** Each value goes to a parallel task and back, beside a portable both ways, and with no portable at all. */
  function* roundTrips(values: unknown[]): Generator<B.Instruction, unknown[][], unknown> {
    const out: unknown[][] = [];
    for (const value of values) {
      const [counter, withPortable] = yield* B.awaitExn(B.call(F.both, new F.Counter(), value));
      const [none, plain] = yield* B.awaitExn(B.call(F.both, null as never, value));
      out.push([counter instanceof F.Counter, withPortable, none, plain]);
    }
    return out;
  }

  const expectUnchanged = (values: unknown[], out: unknown[][]): void => {
    expect(out.map(([counter, , none]) => [counter, none])).toStrictEqual(values.map(() => [true, null]));
    expect(shape(out.map(([, withPortable]) => withPortable))).toStrictEqual(shape(values));
    expect(shape(out.map(([, , , plain]) => plain))).toStrictEqual(shape(values));
    expect(imported()).toBe(false);
  };

  it("on worker domains", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(jsonLike, { minLength: 1, maxLength: 6 }), async (values) => {
        expectUnchanged(values, await B.run(() => roundTrips(values), { domains: 1 }));
      }),
      { numRuns: 15 },
    );
  });

  it("on simulated domains", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(jsonLike, { minLength: 1, maxLength: 6 }), async (values) => {
        expectUnchanged(values, await B.run(() => roundTrips(values), { domains: 1, simulateDomains: true }));
      }),
      { numRuns: 100 },
    );
  });
});
