/** Cancellation: delivery with iterator.throw, whole subtrees, async cleanup. */
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { errorOf, settle, sleepMs, yieldTimes } from "./support/helpers.js";

const forever = function* (): Generator<B.Instruction, never, unknown> {
  for (;;) yield* B.yieldNow();
};

describe("cancel", () => {
  it("of a task that already returned makes its result Cancelled", async () => {
    await B.run(function* () {
      const t = B.spawn(function* () {
        return 2;
      });
      expect(yield* B.awaitExn(t)).toBe(2);
      yield* B.cancel(t);
      const r = yield* B.awaitTask(t);
      expect(r.ok).toBe(false);
      expect((r as { error: unknown }).error).toBeInstanceOf(B.Cancelled);
      expect(t.status).toBe("cancelled");
    });
  });

  it("gives an error that names the task, whose stack is its name and message (no frames of the kernel's loop), whatever Error.stackTraceLimit is", async () => {
    const limit = Error.stackTraceLimit;
    await B.run(function* () {
      const t = B.spawn(forever);
      yield* B.yieldNow();
      yield* B.cancel(t);
      const error = errorOf(yield* B.awaitTask(t));
      expect(error).toBeInstanceOf(B.Cancelled);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toBe(`${t} was cancelled`);
      expect((error as Error).stack).toBe(`Cancelled: ${t} was cancelled`);
      expect(Error.stackTraceLimit).toBe(limit);
    });
  });

  it("of a task that ended but was not awaited also gives Cancelled", async () => {
    await B.run(function* () {
      const t = B.spawn(function* () {
        return 2;
      });
      yield* yieldTimes(2);
      yield* B.cancel(t);
      expect((yield* B.awaitTask(t)).ok).toBe(false);
    });
  });

  it("is a valid way to consume a child", async () => {
    expect(
      await B.run(function* () {
        const t = B.spawn(forever);
        yield* B.cancel(t);
        return "no StillHasChildren";
      }),
    ).toBe("no StillHasChildren");
  });

  it("of a task that never started does not run its body", async () => {
    let ran = false;
    await B.run(function* () {
      const t = B.spawn(function* () {
        ran = true;
      });
      yield* B.cancel(t);
    });
    expect(ran).toBe(false);
  });

  it("reaches the whole subtree; every finally has run when cancel returns", async () => {
    const cleaned: string[] = [];
    const node = function* (name: string, depth: number): Generator<B.Instruction, void, unknown> {
      const kids = depth === 0 ? [] : [B.spawn(node, `${name}.0`, depth - 1), B.spawn(node, `${name}.1`, depth - 1)];
      try {
        yield* B.awaitAll(kids);
        yield* forever();
      } finally {
        cleaned.push(name);
      }
    };
    await B.run(function* () {
      const root = B.spawn(node, "r", 3);
      yield* yieldTimes(10);
      yield* B.cancel(root);
      expect(new Set(cleaned).size).toBe(15);
      // Cancelled reaches a task first; its children are cancelled when its body has ended.
      for (const name of cleaned) {
        for (const d of cleaned.filter((n) => n.startsWith(`${name}.`))) {
          expect(cleaned.indexOf(d)).toBeGreaterThan(cleaned.indexOf(name));
        }
      }
    });
  });

  it("runs other tasks while a cancellation proceeds (the book's p0/p1 example)", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const p1 = B.spawn(function* () {
        try {
          yield* B.yieldNow();
        } finally {
          yield* B.yieldNow();
        }
      });
      const p0 = B.spawn(function* () {
        log.push("Do p0");
      });
      log.push("Cancel p1");
      yield* B.cancel(p1);
      log.push("p1 cancelled");
      yield* B.awaitExn(p0);
    });
    expect(log).toEqual(["Cancel p1", "Do p0", "p1 cancelled"]);
  });

  it("lets finally blocks suspend (async cleanup); the outcome stays Cancelled", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const t = B.spawn(function* () {
        try {
          yield* forever();
        } finally {
          log.push("cleanup start");
          yield* sleepMs(5);
          yield* B.awaitExn(
            B.spawn(function* () {
              log.push("helper ran in cleanup");
            }),
          );
          log.push("cleanup end");
        }
      });
      yield* B.yieldNow();
      yield* B.cancel(t);
      log.push("cancel returned");
      const r = yield* B.awaitTask(t);
      expect((r as { error: unknown }).error).toBeInstanceOf(B.Cancelled);
    });
    expect(log).toEqual(["cleanup start", "helper ran in cleanup", "cleanup end", "cancel returned"]);
  });

  it("a task that swallows Cancelled and returns a value stays cancelled", async () => {
    await B.run(function* () {
      const t = B.spawn(function* () {
        try {
          yield* forever();
        } catch {
          return "swallowed";
        }
      });
      yield* B.yieldNow();
      yield* B.cancel(t);
      const r = yield* B.awaitTask(t);
      expect(r.ok).toBe(false);
      expect((r as { error: unknown }).error).toBeInstanceOf(B.Cancelled);
    });
  });

  it("Cancelled is delivered once; later operations work normally", async () => {
    let caught = 0;
    let afterwards = "";
    await B.run(function* () {
      const t = B.spawn(function* () {
        try {
          yield* forever();
        } catch (e) {
          if (e instanceof B.Cancelled) caught++;
        }
        yield* B.yieldNow();
        afterwards = yield* B.awaitExn(
          B.spawn(function* () {
            return "still works";
          }),
        );
      });
      yield* B.yieldNow();
      yield* B.cancel(t);
    });
    expect(caught).toBe(1);
    expect(afterwards).toBe("still works");
  });

  it("cancels a grandchild that a cancelled child was awaiting", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const p = B.spawn(function* () {
        const q = B.spawn(function* () {
          try {
            yield* forever();
          } finally {
            log.push("q cleaned");
          }
        });
        yield* B.awaitExn(q);
      });
      yield* yieldTimes(3);
      yield* B.cancel(p);
      log.push("p cancelled");
    });
    expect(log).toEqual(["q cleaned", "p cancelled"]);
  });

  it("a cancelled parent awaiting a child does not leave the child behind", async () => {
    await B.run(function* () {
      let inner: B.Task<void> | null = null;
      const p = B.spawn(function* () {
        inner = B.spawn(forever);
        yield* B.awaitExn(inner);
      });
      yield* yieldTimes(2);
      yield* B.cancel(p);
      expect(inner!.status).toBe("cancelled");
    });
  });
});

describe("a failing task", () => {
  it("cancels its children and may forget them", async () => {
    const log: string[] = [];
    const error = errorOf(
      await settle(function* () {
        const t = B.spawn(function* () {
          B.spawn(function* () {
            try {
              yield* forever();
            } finally {
              log.push("child cancelled");
            }
          });
          B.spawn(function* () {
            return "ended, never awaited";
          });
          yield* yieldTimes(2);
          throw new Error("parent failed");
        });
        yield* B.awaitExn(t);
      }),
    );
    expect(String(error)).toMatch("parent failed");
    expect(log).toEqual(["child cancelled"]);
  });

  it("ends only after its children have ended", async () => {
    const log: string[] = [];
    await B.run(function* () {
      const t = B.spawn(function* () {
        B.spawn(function* () {
          try {
            yield* forever();
          } finally {
            yield* sleepMs(5);
            log.push("child done");
          }
        });
        yield* B.yieldNow();
        throw new Error("x");
      });
      yield* B.awaitTask(t);
      log.push("parent awaited");
    });
    expect(log).toEqual(["child done", "parent awaited"]);
  });
});

describe("the run's signal", () => {
  it("cancels the root; run rejects with the abort reason after cleanup", async () => {
    const controller = new AbortController();
    let cleaned = false;
    const running = B.run(
      function* () {
        const t = B.spawn(function* () {
          try {
            yield* sleepMs(10_000);
          } finally {
            cleaned = true;
          }
        });
        yield* B.awaitExn(t);
      },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(new Error("stop")), 5);
    await expect(running).rejects.toThrow("stop");
    expect(cleaned).toBe(true);
  });
});
