/**
 * Messages that used to mislead: each names the rule that was broken and what
 * to do instead.
 */
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { caught, errorOf, settle } from "./support/helpers.js";

function* body(): Generator<B.Instruction, number, unknown> {
  return 1;
}

const GENERATOR_OBJECT = "a generator object (the generator function was called: pass the function itself, with its arguments after it)";

/** The synchronous error of `fn`. */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a synchronous error");
}

describe("a generator object where its function belongs", () => {
  it("run says it got a generator object and to pass the function", () => {
    const error = thrown(() => B.run(body() as never));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe(`run(main) expects a generator function (function* () { … }), got ${GENERATOR_OBJECT}`);
  });

  it("defineTask says so too", () => {
    expect(thrown(() => B.defineTask(import.meta.url, "t", body() as never)).message).toBe(
      `defineTask(url, "t", body) expects a generator function as body, got ${GENERATOR_OBJECT}`,
    );
  });

  it("spawn, call, group, forEach and parallel inside a task say so, never 'got undefined' or 'got a '", async () => {
    const messages = await B.run(function* () {
      return [
        thrown(() => B.spawn(body() as never)).message,
        thrown(() => B.spawn({}, body() as never)).message,
        thrown(() => B.call(body() as never)).message,
        thrown(() => B.group(body() as never)).message,
        ((yield* caught(B.forEach([1], body() as never))) as Error).message,
        thrown(() => B.parallel(body() as never, [1])).message,
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
    expect(thrown(() => B.self("Queue.push()")).message).toBe(
      "Queue.push() must be called from inside a task: start one with B.run(function* () { … })",
    );
  });
});
