/**
 * Messages that are not Bobbin's, on the ports between domains (a parallel
 * task posting on its worker's parentPort, or on a peer's port from its
 * workerData): they fail the domain that sent them, or the call they claim
 * to answer, with an error that names them; never the process (an exception
 * out of a port's handler would end it), and `run` settles.
 */
import { describe, expect, it } from "vitest";
import * as B from "../../dist-dev/index.js";
import * as F from "./fixtures/hostile.mjs";

/** How the run ended: its value, or the error it rejected with. */
const settle = (p: Promise<unknown>): Promise<{ ok: boolean; value: unknown }> =>
  p.then(
    (value) => ({ ok: true, value }),
    (value: unknown) => ({ ok: false, value }),
  );

describe("a message that is not one of Bobbin's", () => {
  it.each([
    ["null", null, /a message is an array/],
    ["a string", "hello", /a message is an array/],
    ["an unknown kind", [99, 1], /its kind is not one of Bobbin's messages \(number 99\)/],
    ["a result whose id is not one", [2, "1", 0], /"1" is not an id/],
    ["a cancellation from a domain not connected", [1, 1, 7], /number 7 is not a domain connected to this one/],
    ["a malformed snapshot", [11, 1, { domain: 1, tasks: null, serving: [] }], /a snapshot is a domain's tasks/],
    ["a batch of garbage", [12, [[6, 1], null]], /a message is an array/],
  ])("from a worker to dom0 (%s) fails the run with an error naming the worker and the message", async (_, message, why) => {
    const r = await settle(
      B.run(
        function* () {
          return yield* B.awaitTask(B.call(F.postsToDom0, message));
        },
        { domains: 1 },
      ),
    );
    expect(r.ok).toBe(false);
    expect(r.value).toBeInstanceOf(TypeError);
    expect((r.value as Error).message).toMatch(/^domain 1 sent domain 0 a message that is not one of Bobbin's/);
    expect((r.value as Error).message).toMatch(why);
    expect((r.value as Error).message).toMatch(/must not post on its worker's parentPort/);
  });

  it("from a worker to another worker fails the run with an error naming both", async () => {
    const r = await settle(
      B.run(
        function* () {
          return yield* B.awaitTask(B.call({ pin: 1 }, F.postsToPeer, "hello"));
        },
        { domains: 2 },
      ),
    );
    expect(r.ok).toBe(false);
    expect((r.value as Error).message).toMatch(/^domain 1 sent domain 2 a message that is not one of Bobbin's \("hello"\)/);
  });

  it("a result for a call with slots that are not slots fails that call only", async () => {
    // Call ids of a run's dom0 start at 1: the worker answers its own call with portables listed in no known form.
    const r = await B.run(
      function* () {
        const forged = yield* B.awaitTask(B.call(F.postsToDom0, [3, 1, [null], "slots"]));
        const next = yield* B.awaitExn(B.call(F.seen, new F.Counter(), { still: "works" }));
        return { forged, next };
      },
      { domains: 1 },
    );
    expect(r.forged.ok).toBe(false);
    expect(String((r.forged as { error: Error }).error)).toMatch(/lists its portables in a form this version of Bobbin does not know/);
    expect(r.next).toEqual({ counter: true, value: { still: "works" } });
  });

  it("a failure whose error is not an encoded error fails that call with a TypeError that describes it", async () => {
    const r = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(F.postsToDom0, [4, 1, "not an error"]));
      },
      { domains: 1 },
    );
    expect(r.ok).toBe(false);
    const error = (r as { error: Error }).error;
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe('an error came from another domain in a form this version of Bobbin does not know ("not an error")');
  });

  it("a failure whose error is its own cause fails that call, its chain of causes cut at 8", async () => {
    const looped: Record<string, unknown> = { name: "Error", message: "loop", stack: undefined, props: {} };
    looped.cause = { error: looped };
    const r = await B.run(
      function* () {
        return yield* B.awaitTask(B.call(F.postsToDom0, [4, 1, looped]));
      },
      { domains: 1 },
    );
    let error: unknown = (r as { error: Error }).error;
    let depth = 0;
    for (; error instanceof Error; error = error.cause) {
      expect(error.message).toBe("loop");
      depth++;
    }
    expect(depth).toBe(9);
    expect(error).toBeUndefined();
  });

  it("a fatal error that is not an encoded error fails the run with a TypeError that describes it", async () => {
    const r = await settle(
      B.run(
        function* () {
          return yield* B.awaitTask(B.call(F.postsToDom0, [5, { name: 1 }]));
        },
        { domains: 1 },
      ),
    );
    expect(r.ok).toBe(false);
    expect(String(r.value)).toBe("TypeError: an error came from another domain in a form this version of Bobbin does not know (an object)");
  });
});
