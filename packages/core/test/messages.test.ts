/**
 * Messages that used to mislead: each names the rule that was broken and what
 * to do instead.
 */
import { thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { caught, errorOf, settle, yieldTimes } from "./support/helpers.js";

function* body(): Generator<B.Instruction, number, unknown> {
  return 1;
}

const GENERATOR_OBJECT = "a generator object (the generator function was called: pass the function itself, with its arguments after it)";

describe("a generator object where its function belongs", () => {
  it("run says it got a generator object and to pass the function", () => {
    const error = thrownBy(() => B.run(body() as never));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe(`run(main) expects a generator function (function* () { … }), got ${GENERATOR_OBJECT}`);
  });

  it("defineTask says so too", () => {
    expect(thrownBy(() => B.defineTask(import.meta.url, "t", body() as never)).message).toBe(
      `defineTask(url, "t", body) expects a generator function as body, got ${GENERATOR_OBJECT}`,
    );
  });

  it("spawn, call, group, forEach and parallel inside a task say so, never 'got undefined' or 'got a '", async () => {
    const messages = await B.run(function* () {
      return [
        thrownBy(() => B.spawn(body() as never)).message,
        thrownBy(() => B.spawn({}, body() as never)).message,
        thrownBy(() => B.call(body() as never)).message,
        thrownBy(() => B.group(body() as never)).message,
        ((yield* caught(B.forEach([1], body() as never))) as Error).message,
        thrownBy(() => B.parallel(body() as never, [1])).message,
      ];
    });
    for (const message of messages) {
      expect(message).toContain(GENERATOR_OBJECT);
      expect(message).not.toMatch(/got (undefined|a )$/);
    }
  });
});

describe("NotAChild", () => {
  it("names the rule and the ways to get a result across, with tools that exist", async () => {
    const error = errorOf(
      await settle(function* main() {
        const a = B.spawn(function* worker() {
          yield* B.yieldNow();
        });
        const b = B.spawn(function* sibling() {
          yield* B.awaitTask(a);
        });
        yield* B.awaitExn(b);
      }),
    ) as Error;
    expect(error).toBeInstanceOf(B.NotAChild);
    expect(error.message).toBe(
      "sibling#3 cannot await worker#2: only the direct parent may await a task; " +
        "return the task to its parent, or send results back through a @bobbin/sync Channel or MVar",
    );
  });
});

describe("an operation outside a task", () => {
  it("self(caller) names the caller's operation", () => {
    expect(thrownBy(() => B.self("Queue.push()")).message).toBe(
      "Queue.push() must be called from inside a task: start one with B.run(function* () { … })",
    );
  });
});

describe("an async function where a generator function belongs", () => {
  const rule =
    /a task's body is a plain generator function whose operations run with yield\*, never an async one; wait for a Promise in it with yield\* B\.promise/;

  it("spawn, group, protect and g.spawn name the rule, and what they got", async () => {
    const messages = await B.run(function* () {
      return [
        thrownBy(() => B.spawn(async function* fetchAll() {} as never)).message,
        thrownBy(() => B.spawn(async function load() {} as never)).message,
        ((yield* caught(B.group(async function* body() {} as never))) as Error).message,
        ((yield* caught(B.protect({}, async function* guarded() {} as never))) as Error).message,
        (
          (yield* caught(
            B.group(function* (g) {
              g.spawn(async function* worker() {} as never);
            }),
          )) as Error
        ).message,
      ];
    });
    expect(messages[0]).toMatch(/^spawn expects a generator function \(function\* \(\) \{ … \}\), got async generator function fetchAll: /);
    expect(messages[1]).toMatch(/got async function load: /);
    for (const message of messages) {
      expect(message).toMatch(rule);
      expect(message).not.toContain("is not iterable");
    }
  });

  it("run and defineTask say so at once", () => {
    expect(thrownBy(() => B.run(async function* main() {} as never)).message).toMatch(rule);
    expect(thrownBy(() => B.defineTask(import.meta.url, "asyncTask", async function* () {} as never)).message).toMatch(rule);
  });

  it("a function that returns an async generator object is named as such", async () => {
    const message = await B.run(function* () {
      return thrownBy(() => B.spawn((() => (async function* () {})()) as never)).message;
    });
    expect(message).toMatch(/returned an async generator object; write it as function\* \(\) \{ … \}/);
  });
});

describe("values in messages", () => {
  it('describe quotes a string, so that "1" is never read as the number 1', () => {
    expect(L.describe("1")).toBe('"1"');
    expect(L.describe(1)).toBe("number 1");
  });

  it("a policy that returns a string index, a bare yield of a string, a pin and a url given as strings say they got strings", async () => {
    const policy: L.SchedulingPolicy = { pick: () => "1" as never };
    const pick = errorOf(
      await settle(
        function* () {
          yield* B.awaitAll([B.spawn(yieldTimes, 1), B.spawn(yieldTimes, 1)]);
        },
        { policy },
      ),
    ) as B.CallbackFailed;
    expect((pick.cause as Error).message).toBe('pick returned "1" for 2 ready tasks: return an index in [0, 2)');

    const bare = await B.run(function* named() {
      try {
        yield "1" as never;
      } catch (error) {
        return (error as Error).message;
      }
      return "no error";
    });
    expect(bare).toMatch(/^named#1 yielded "1" to the scheduler/);

    const task = B.defineTask(import.meta.url, "pinned", function* () {});
    const pin = await B.run(
      function* () {
        return thrownBy(() => B.call({ pin: "1" as never }, task)).message;
      },
      { domains: 1, simulateDomains: true },
    );
    expect(pin).toMatch(/got "1"$/);

    expect(thrownBy(() => B.defineTask("fib.ts", "fib", function* () {})).message).toMatch(/got "fib\.ts"$/);
  });
});

describe("a definition given a path where its module's URL belongs", () => {
  it("defineTask, defineEvents, definePortable and defineError say how a CommonJS module makes its URL", () => {
    const path = "/srv/app/tasks.js"; // what a CommonJS module has: __filename
    const portable = { test: () => false, encode: () => 0, decode: () => ({}) };
    const messages = [
      thrownBy(() => B.defineTask(path, "fib", function* () {})).message,
      thrownBy(() => L.defineEvents(path, "events", (() => {}) as never)).message,
      thrownBy(() => B.definePortable(path, "point", portable)).message,
      thrownBy(() => B.defineError(path, class Quota extends Error {})).message,
    ];
    for (const message of messages) {
      expect(message).toContain("expects the defining module's import.meta.url as url");
      expect(message).toContain('in a CommonJS module: require("node:url").pathToFileURL(__filename).href');
      expect(message).toMatch(/got "\/srv\/app\/tasks\.js"$/);
    }
  });
});

describe("spawn({ give })", () => {
  it("refuses what no package can move, whatever other packages did: core checks every element", async () => {
    const messages = await B.run(function* () {
      return [
        thrownBy(() => B.spawn({ give: [{}] }, function* () {})).message,
        thrownBy(() => B.spawn({ give: [42] }, function* () {})).message,
        ((yield* caught(B.group({ give: [null] }, function* () {}))) as Error).message,
      ];
    });
    const rule =
      "takes resources to move to the child (made by @bobbin/sync's Ownership.create, or marked with givable of @bobbin/core/lowlevel), got";
    expect(messages).toEqual([
      `spawn({ give }) ${rule} an object at index 0: pass other values as arguments`,
      `spawn({ give }) ${rule} number 42 at index 0: pass other values as arguments`,
      `group({ give }) ${rule} null at index 0: pass other values as arguments`,
    ]);
  });

  it("takes a value marked with L.givable; spawn hooks see it", async () => {
    const resource = { [L.givable]: true as const };
    const seen: unknown[] = [];
    const off = L.onSpawn((_child, _parent, options) => seen.push(...(options?.give ?? [])));
    try {
      await B.run(function* () {
        yield* B.awaitExn(B.spawn({ give: [resource] }, function* () {}));
      });
    } finally {
      off();
    }
    expect(seen).toEqual([resource]);
  });
});
