/**
 * Code the kernel calls but does not own (handlers, hooks, a tracer, a
 * policy, the events backend) cannot break a run: what escapes fails it with
 * `CallbackFailed` naming the source, and the run still settles.
 */
import { describe, expect, it } from "vitest";
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";
import { errorOf, ManualEvents, protocolBreaker, settle, yieldTimes } from "../support/helpers.js";

function callbackFailure(result: B.Result<unknown>): B.CallbackFailed {
  const error = errorOf(result);
  expect(error).toBeInstanceOf(B.CallbackFailed);
  return error as B.CallbackFailed;
}

describe("guards around foreign code", () => {
  it("an onCancellation handler that throws: the child is still cancelled at once, the parent is not hit by the handler's error, the run fails naming it", async () => {
    const seen: string[] = [];
    let child: B.Task<void> | null = null;
    const result = await settle(function* () {
      child = B.spawn(function* worker() {
        try {
          yield* B.protect(
            {
              onCancellation: () => {
                throw new Error("handler broke");
              },
            },
            function* () {
              yield* new L.Trigger().wait();
            },
          );
        } finally {
          seen.push("child finally");
        }
      });
      yield* B.yieldNow();
      try {
        yield* B.cancel(child);
      } catch (error) {
        // The run failed, so the parent is cancelled too: with Cancelled, never with the handler's error.
        seen.push(`parent: ${(error as Error).name}`);
        throw error;
      }
    });
    expect(seen).toEqual(["child finally", "parent: Cancelled"]);
    expect(child!.status).toBe("cancelled");
    const error = callbackFailure(result);
    expect(error.source).toMatch(/onCancellation handler of protect in worker#\d+/);
    expect(error.message).toMatch(/handler broke/);
  });

  it("protect checks its handlers when called, not when they are needed", async () => {
    await B.run(function* () {
      expect(() => B.protect({ onCancellation: 5 } as never, function* () {}).next()).toThrow(
        /protect\(\{ onCancellation \}\) expects a function, got number 5/,
      );
      expect(() => B.protect(undefined as never, function* () {}).next()).toThrow(/expects handlers/);
    });
  });

  it("a select that returns something that is not a list of signals fails the run (not a Deadlock)", async () => {
    for (const answer of [42, [42], [null]]) {
      const events: L.Events = { select: () => answer as never, interrupt() {} };
      const result = await settle(
        function* () {
          yield* L.suspend(L.syscall("never"));
        },
        { events: () => events },
      );
      const error = callbackFailure(result);
      expect(error.source).toBe("the events backend's select");
      expect(error.cause).toBeInstanceOf(TypeError);
      expect(error.message).toMatch(/not (an array of signals|a signal of this domain)/);
    }
  });

  it("a select, an interrupt or a finaliser that throws fails the run naming it", async () => {
    const throwing = new ManualEvents();
    throwing.select = () => {
      throw new Error("select broke");
    };
    expect(
      callbackFailure(
        await settle(
          function* () {
            yield* L.suspend(L.syscall());
          },
          { events: () => throwing },
        ),
      ).source,
    ).toBe("the events backend's select");

    const finalising = new ManualEvents();
    finalising.finaliser = () => {
      throw new Error("finaliser broke");
    };
    expect(callbackFailure(await settle(function* () {}, { events: () => finalising })).source).toBe("the events backend's finaliser");
  });

  it("an exit hook that throws fails the run naming it", async () => {
    const off = L.onExit(function auditor(task) {
      if (task.parent !== null) throw new Error("hook broke");
    });
    try {
      const error = callbackFailure(
        await settle(function* () {
          yield* B.awaitExn(B.spawn(function* () {}));
        }),
      );
      expect(error.source).toMatch(/exit hook auditor/);
    } finally {
      off();
    }
  });

  it("a tracer or a scheduling policy that throws fails the run naming it", async () => {
    const tracer: L.Tracer = {
      start: () => {
        throw new Error("tracer broke");
      },
    };
    expect(callbackFailure(await settle(function* () {}, { tracer })).source).toBe("the tracer's start");

    const policy: L.SchedulingPolicy = { pick: () => 7 };
    const error = callbackFailure(
      await settle(
        function* () {
          const a = B.spawn(yieldTimes, 2);
          const b = B.spawn(yieldTimes, 2);
          yield* B.awaitAll([a, b]);
        },
        { policy },
      ),
    );
    expect(error.source).toBe("the scheduling policy");
    expect(error.cause).toBeInstanceOf(RangeError);
  });

  it("an operation that breaks the kernel's protocol settles the run with InternalError, never a hang", async () => {
    const error = errorOf(
      await settle(function* () {
        yield* protocolBreaker;
      }),
    );
    expect(error).toBeInstanceOf(B.InternalError);
  });
});
