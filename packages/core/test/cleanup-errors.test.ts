/**
 * No error vanishes: an error thrown while a task is being cancelled (by its
 * `finally`, a `protect` handler, a task of its subtree) becomes the outcome
 * of that task and reaches whoever consumes it, on every path a task is
 * cancelled by.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { caught, errorOf, settle, yieldTimes } from "./support/helpers.js";

/** Parks until cancelled; its cleanup then fails with `error` (after a suspension, as a real close would). */
function* closesBadly(error: unknown): Generator<B.Instruction, never, unknown> {
  try {
    yield* new L.Trigger().wait();
    throw new Error("unreachable: nobody signals this trigger");
  } finally {
    yield* B.yieldNow();
    // biome-ignore lint/correctness/noUnsafeFinally: the cleanup failing is what these tests are about
    throw error;
  }
}

function* failAfter(n: number, error: unknown): Generator<B.Instruction, never, unknown> {
  yield* yieldTimes(n);
  throw error;
}

function* parkForever(): Generator<B.Instruction, never, unknown> {
  yield* new L.Trigger().wait();
  throw new Error("unreachable: nobody signals this trigger");
}

/** Opens a group whose task fails in its cleanup, and waits in the group's body until stopped. */
function* groupOwner(): Generator<B.Instruction, void, unknown> {
  yield* B.group(function* (g) {
    g.spawn(closesBadly, close);
    yield* parkForever();
  });
}

const flush = new Error("flush failed");
const close = new Error("close failed");
const boom = new Error("boom");

describe("an error thrown by a task's cleanup while it is cancelled", () => {
  it("is the task's outcome, and cancel throws it, unchanged", async () => {
    const seen = await B.run(function* () {
      const t = B.spawn(closesBadly, flush);
      yield* B.yieldNow();
      const error = yield* caught(B.cancel(t));
      return { error, status: t.status };
    });
    expect(seen.error).toBe(flush);
    expect(flush.cause).toBeUndefined();
    expect(seen.status).toBe("failed");
  });

  it("fails the run when nobody catches it; a parent that catches it goes on", async () => {
    const uncaught = await settle(function* () {
      const t = B.spawn(closesBadly, flush);
      yield* B.yieldNow();
      yield* B.cancel(t);
    });
    expect(errorOf(uncaught)).toBe(flush);
    const handled = await B.run(function* () {
      const t = B.spawn(closesBadly, flush);
      yield* B.yieldNow();
      yield* caught(B.cancel(t));
      return "went on";
    });
    expect(handled).toBe("went on");
  });

  it("is what awaiting the task gives, when the task was cancelled by a failure above it", async () => {
    const r = await settle(function* main() {
      const t = B.spawn(function* middle() {
        const inner = B.spawn(closesBadly, close);
        yield* B.yieldNow();
        yield* B.awaitExn(inner);
      });
      yield* B.yieldNow();
      yield* B.yieldNow();
      yield* B.cancel(t);
    });
    expect(errorOf(r)).toBe(close);
  });

  it("a body that throws after its cancellation was asked for (a result was on its way) fails with its error", async () => {
    const seen = await B.run(function* () {
      const trigger = new L.Trigger();
      const t = B.spawn(function* () {
        yield* trigger.wait();
        throw boom; // it runs with the trigger's result: Cancelled was not delivered yet
      });
      yield* B.yieldNow();
      trigger.signal();
      return { error: yield* caught(B.cancel(t)), status: t.status };
    });
    expect(seen).toEqual({ error: boom, status: "failed" });
  });

  it("is reported as failed with the error on bobbin:task:end", async () => {
    const ends: { name: string; status: string; error: unknown }[] = [];
    const listener = (message: unknown): void => {
      const { task, status, error } = message as { task: B.Task; status: string; error: unknown };
      ends.push({ name: task.name, status, error });
    };
    subscribe(B.channels.task.end, listener);
    try {
      await B.run(function* () {
        const t = B.spawn({ name: "writer" }, closesBadly, flush);
        yield* B.yieldNow();
        yield* caught(B.cancel(t));
      });
    } finally {
      unsubscribe(B.channels.task.end, listener);
    }
    expect(ends.find((e) => e.name === "writer")).toEqual({ name: "writer", status: "failed", error: flush });
  });

  it("of a child reaches its parent's outcome when the parent is cancelled (the parent's own cleanup passing)", async () => {
    const seen = await B.run(function* () {
      const parent = B.spawn(function* parent() {
        B.spawn(closesBadly, close);
        yield* parkForever();
      });
      yield* yieldTimes(2);
      return { error: yield* caught(B.cancel(parent)), status: parent.status };
    });
    expect(seen).toEqual({ error: close, status: "failed" });
  });

  it("of several tasks of one subtree are all kept: the task's own error first, in a Failures", async () => {
    const error = await B.run(function* () {
      const parent = B.spawn(function* parent() {
        B.spawn(closesBadly, close);
        try {
          yield* parkForever();
        } finally {
          // biome-ignore lint/correctness/noUnsafeFinally: the cleanup failing is what this test is about
          throw flush;
        }
      });
      yield* yieldTimes(2);
      return yield* caught(B.cancel(parent));
    });
    expect(error).toBeInstanceOf(B.Failures);
    const failures = error as B.Failures;
    expect(failures.errors).toEqual([flush, close]);
    expect(failures.cause).toBe(flush);
    expect(failures.message).toBe("2 errors, the first first: Error: flush failed; Error: close failed");
  });

  it("of an orphan reaches the outcome of the task that held it", async () => {
    const error = await B.run(function* () {
      const server = B.spawn(function* server() {
        const bg = B.orphans();
        B.spawn({ orphans: bg }, closesBadly, close);
        yield* parkForever();
      });
      yield* yieldTimes(2);
      return yield* caught(B.cancel(server));
    });
    expect(error).toBe(close);
  });

  it("of a child whose parent returned with it still alive is in StillHasChildren", async () => {
    const error = errorOf(
      await settle(function* main() {
        const t = B.spawn({ name: "writer" }, closesBadly, flush);
        yield* B.yieldNow();
        return t.uid;
      }),
    ) as B.StillHasChildren;
    expect(error).toBeInstanceOf(B.StillHasChildren);
    expect(error.errors).toEqual([flush]);
    expect(error.cause).toBe(flush);
    expect(error.outcomes).toEqual([{ task: "writer#2", uid: 2, status: "pending", started: true, error: flush }]);
    expect(error.message).toContain("writer#2 (still running, then failed while cancelled: Error: flush failed)");
  });
});

describe("an exit hook's error at the end of a cancelled or failed task (a resource's finaliser)", () => {
  it("joins the task's outcome: a cancelled task fails with it, a failed one lists it after its own", async () => {
    const leak = new Error("finaliser failed");
    const off = L.onExit((task) => (task.name === "holder" ? leak : undefined));
    try {
      const seen = await B.run(function* () {
        const cancelled = B.spawn(function* holder() {
          yield* parkForever();
        });
        const failing = B.spawn({ name: "holder" }, failAfter, 1, boom);
        yield* B.yieldNow();
        return { cancel: yield* caught(B.cancel(cancelled)), status: cancelled.status, failed: yield* B.awaitTask(failing) };
      });
      expect(seen.cancel).toBe(leak);
      expect(seen.status).toBe("failed");
      expect(seen.failed.ok).toBe(false);
      expect(((seen.failed as { error: unknown }).error as B.Failures).errors).toEqual([boom, leak]);
    } finally {
      off();
    }
  });
});

describe("protect's finally", () => {
  it("throwing while the task is cancelled: the task fails with that error", async () => {
    const seen = await B.run(function* () {
      const t = B.spawn(function* () {
        yield* B.protect(
          {
            finally: () => {
              throw flush;
            },
          },
          parkForever,
        );
      });
      yield* B.yieldNow();
      return { error: yield* caught(B.cancel(t)), status: t.status };
    });
    expect(seen).toEqual({ error: flush, status: "failed" });
  });

  it("throwing after the body threw: both errors, the body's first", async () => {
    const error = errorOf(
      await settle(function* () {
        yield* B.protect(
          {
            finally: () => {
              throw flush;
            },
          },
          function* () {
            throw boom;
          },
        );
      }),
    );
    expect(error).toBeInstanceOf(B.Failures);
    expect((error as B.Failures).errors).toEqual([boom, flush]);
  });

  it("throwing after the body returned: its error is the outcome", async () => {
    const error = errorOf(
      await settle(function* () {
        return yield* B.protect(
          {
            finally: () => {
              throw flush;
            },
          },
          function* () {
            return 1;
          },
        );
      }),
    );
    expect(error).toBe(flush);
  });
});

describe("a group", () => {
  it("throws every failure: the first, then the siblings' cleanup errors", async () => {
    const error = errorOf(
      await settle(function* () {
        yield* B.group(function* (g) {
          g.spawn(closesBadly, close);
          g.spawn(closesBadly, flush);
          g.spawn(failAfter, 2, boom);
        });
      }),
    );
    expect(error).toBeInstanceOf(B.Failures);
    expect((error as B.Failures).errors).toEqual([boom, close, flush]);
  });

  it("with a single failure throws it as it is", async () => {
    const error = errorOf(
      await settle(function* () {
        yield* B.group(function* (g) {
          g.spawn(parkForever);
          g.spawn(failAfter, 2, boom);
        });
      }),
    );
    expect(error).toBe(boom);
  });

  it("whose task fails only in its cleanup after g.cancel() fails with that error", async () => {
    const error = errorOf(
      await settle(function* () {
        yield* B.group(function* (g) {
          g.spawn(closesBadly, close);
          yield* B.yieldNow();
          g.cancel();
          return 1;
        });
      }),
    );
    expect(error).toBe(close);
  });

  it("cancelled from outside: cancel throws its tasks' cleanup errors", async () => {
    const error = await B.run(function* () {
      const t = B.spawn(groupOwner);
      yield* yieldTimes(3);
      return yield* caught(B.cancel(t));
    });
    expect(error).toBe(close);
  });

  it("interrupted (L.interrupt) while its tasks fail in cleanup: the interruption first, then their errors", async () => {
    const error = await B.run(function* () {
      const t = B.spawn(groupOwner);
      yield* yieldTimes(3);
      L.interrupt(t, boom);
      return (yield* B.awaitTask(t)) as B.Result<unknown>;
    });
    expect(error.ok).toBe(false);
    expect(((error as { error: unknown }).error as B.Failures).errors).toEqual([boom, close]);
  });
});

describe("forEach and map", () => {
  it("forEach throws the first failure and the cleanup errors of the items it cancelled", async () => {
    const error = errorOf(
      await settle(function* () {
        yield* B.forEach([close, boom], function* (e, i) {
          if (i === 0) yield* closesBadly(e);
          else yield* failAfter(2, e);
        });
      }),
    );
    expect((error as B.Failures).errors).toEqual([boom, close]);
  });

  it("map too", async () => {
    const error = errorOf(
      await settle(function* () {
        return yield* B.map([close, boom], function* (e, i) {
          if (i === 0) yield* closesBadly(e);
          return yield* failAfter(2, e);
        });
      }),
    );
    expect((error as B.Failures).errors).toEqual([boom, close]);
  });
});

describe("all, any, race: the losers' cleanup errors", () => {
  it("all throws the first failure, then the cleanup errors of the others", async () => {
    const error = errorOf(
      await settle(function* () {
        yield* B.all([closesBadly(close), failAfter(2, boom)]);
      }),
    );
    expect((error as B.Failures).errors).toEqual([boom, close]);
  });

  it("any, whose winner succeeded, throws a loser's cleanup error rather than dropping it", async () => {
    const error = errorOf(
      await settle(function* () {
        return yield* B.any([
          closesBadly(close),
          (function* () {
            yield* yieldTimes(2);
            return "won";
          })(),
        ]);
      }),
    );
    expect(error).toBe(close);
  });

  it("race, whose first to end succeeded, throws the losers' cleanup errors", async () => {
    const error = errorOf(
      await settle(function* () {
        return yield* B.race([closesBadly(close), closesBadly(flush), B.promise(() => Promise.resolve("first"))]);
      }),
    );
    expect((error as B.Failures).errors).toEqual([close, flush]);
  });

  it("race, whose first to end failed, throws its error first", async () => {
    const error = errorOf(
      await settle(function* () {
        return yield* B.race([closesBadly(close), failAfter(1, boom)]);
      }),
    );
    expect((error as B.Failures).errors).toEqual([boom, close]);
  });

  it("awaitFirst throws the losers' cleanup errors", async () => {
    const error = await B.run(function* () {
      const loser = B.spawn(closesBadly, close);
      const winner = B.spawn(function* () {
        yield* yieldTimes(2);
        return 1;
      });
      return yield* caught(B.awaitFirst([loser, winner]));
    });
    expect(error).toBe(close);
  });
});

describe("the run", () => {
  it("a system task whose cleanup fails at shutdown fails the run", async () => {
    const r = await settle(function* () {
      L.spawnSystem(closesBadly, close);
      yield* B.yieldNow();
      return 1;
    });
    expect(errorOf(r)).toBe(close);
  });

  it("the root's failure comes first, then a system task's cleanup error", async () => {
    const r = await settle(function* () {
      L.spawnSystem(closesBadly, close);
      yield* B.yieldNow();
      throw boom;
    });
    expect((errorOf(r) as B.Failures).errors).toEqual([boom, close]);
  });

  it("a run failed by its signal still reports the cleanup errors of the tasks it cancelled", async () => {
    const controller = new AbortController();
    const reason = new Error("stop");
    const r = await settle(
      function* () {
        const t = B.spawn(closesBadly, close);
        yield* B.yieldNow();
        controller.abort(reason);
        yield* B.awaitExn(t);
      },
      { signal: controller.signal },
    );
    expect((errorOf(r) as B.Failures).errors).toEqual([reason, close]);
  });
});

describe("across domains (simulated)", () => {
  it("a parallel task's cleanup error crosses back: cancel throws a copy of it", async () => {
    const task = B.defineTask(import.meta.url, "closesBadlyHere", closesBadly);
    const error = await B.run(
      function* () {
        const t = B.call(task, new RangeError("close failed"));
        yield* yieldTimes(2);
        return yield* caught(B.cancel(t));
      },
      { domains: 1, simulateDomains: true },
    );
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toBe("close failed");
  });
});

describe("Failures", () => {
  it("is never nested, and lists an error once", () => {
    const inner = new B.Failures([boom, close]);
    expect(new B.Failures([inner, flush, close]).errors).toEqual([boom, close, flush]);
  });
});
