/** Miou's rules of the task tree: no forgotten child, only the parent awaits or cancels. */
import { describe, expect, it } from "vitest";
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";
import { errorOf, settle } from "../support/helpers.js";

describe("forgetting a child", () => {
  it("fails run with StillHasChildren", async () => {
    const error = errorOf(
      await settle(function* () {
        B.spawn(function* () {});
      }),
    );
    expect(error).toBeInstanceOf(B.StillHasChildren);
    expect((error as Error).name).toBe("StillHasChildren");
  });

  it("also when a task returns its own child's task", async () => {
    const error = errorOf(
      await settle(function* () {
        const parent = B.spawn(function* () {
          return B.spawn(function* () {
            return 1;
          });
        });
        yield* B.awaitTask(parent);
      }),
    );
    expect(error).toBeInstanceOf(B.StillHasChildren);
  });

  it("also when the child had ended but was never awaited", async () => {
    const error = errorOf(
      await settle(function* () {
        B.spawn(function* () {});
        yield* B.yieldNow();
        yield* B.yieldNow();
      }),
    );
    expect(error).toBeInstanceOf(B.StillHasChildren);
  });

  it("keeps the error of a failed child nobody awaited: in outcomes, errors, cause and the message", async () => {
    const parseError = new Error("cannot parse config");
    const error = errorOf(
      await settle(function* main() {
        B.spawn(function* loadConfig() {
          throw parseError;
        });
        B.spawn({ name: "ticker" }, function* () {
          yield* new L.Trigger().wait();
        });
        yield* B.yieldNow();
        yield* B.yieldNow();
      }),
    ) as B.StillHasChildren;
    expect(error).toBeInstanceOf(B.StillHasChildren);
    expect(error.message).toContain(
      "main#1 returned while its children [loadConfig#2 (failed: Error: cannot parse config), ticker#3 (still running)]",
    );
    expect(error.cause).toBe(parseError);
    expect(error.errors).toEqual([parseError]);
    expect(error.outcomes).toEqual([
      { task: "loadConfig#2", uid: 2, status: "failed", error: parseError },
      { task: "ticker#3", uid: 3, status: "pending", started: true },
    ]);
    expect(error.children).toEqual([2, 3]);
  });

  it("says which forgotten children never started, rather than that they still run", async () => {
    let ran = false;
    const error = errorOf(
      await settle(function* main() {
        B.spawn({ name: "ticker" }, function* () {
          yield* new L.Trigger().wait();
        });
        yield* B.yieldNow();
        B.spawn(function* late() {
          ran = true;
        });
      }),
    ) as B.StillHasChildren;
    expect(error.message).toContain("main#1 returned while its children [ticker#2 (still running), late#3 (never started)]");
    expect(error.outcomes).toEqual([
      { task: "ticker#2", uid: 2, status: "pending", started: true },
      { task: "late#3", uid: 3, status: "pending", started: false },
    ]);
    expect(ran).toBe(false);
  });

  it("has no cause when no forgotten child failed", async () => {
    const error = errorOf(
      await settle(function* () {
        B.spawn(function* quick() {});
        yield* B.yieldNow();
      }),
    ) as B.StillHasChildren;
    expect(error.message).toContain("[quick#2 (resolved, not awaited)]");
    expect(error.cause).toBeUndefined();
    expect(error.errors).toEqual([]);
  });

  it("cannot be caught by the task: run fails even if the parent handles the error", async () => {
    const error = errorOf(
      await settle(function* () {
        const t = B.spawn(function* () {
          B.spawn(function* () {});
        });
        const r = yield* B.awaitTask(t);
        expect(r.ok).toBe(false);
        return "handled";
      }),
    );
    expect(error).toBeInstanceOf(B.StillHasChildren);
  });

  it("cancels the rest of the run", async () => {
    let cleanedUp = false;
    const error = errorOf(
      await settle(function* () {
        const long = B.spawn(function* () {
          try {
            for (;;) yield* B.yieldNow();
          } finally {
            cleanedUp = true;
          }
        });
        const bad = B.spawn(function* () {
          B.spawn(function* () {});
        });
        yield* B.awaitTask(bad);
        yield* B.awaitTask(long);
      }),
    );
    expect(error).toBeInstanceOf(B.StillHasChildren);
    expect(cleanedUp).toBe(true);
  });
});

describe("NotAChild", () => {
  it("awaiting a sibling", async () => {
    const error = errorOf(
      await settle(function* () {
        const a = B.spawn(function* () {
          yield* B.yieldNow();
        });
        const b = B.spawn(function* () {
          yield* B.awaitExn(a);
        });
        yield* B.awaitExn(a);
        yield* B.awaitExn(b);
      }),
    );
    expect(error).toBeInstanceOf(B.NotAChild);
    expect(String(error)).toMatch(/only the direct parent/);
  });

  it("cancelling a task one did not spawn", async () => {
    const error = errorOf(
      await settle(function* () {
        const a = B.spawn(function* () {
          yield* B.yieldNow();
        });
        const b = B.spawn(function* () {
          yield* B.cancel(a);
        });
        yield* B.awaitExn(a);
        yield* B.awaitExn(b);
      }),
    );
    expect(error).toBeInstanceOf(B.NotAChild);
  });

  it("awaiting a grandchild", async () => {
    const error = errorOf(
      await settle(function* () {
        let grandchild: B.Task<void> | null = null;
        const child = B.spawn(function* () {
          grandchild = B.spawn(function* () {});
          yield* B.yieldNow();
          yield* B.awaitExn(grandchild);
        });
        yield* B.yieldNow();
        try {
          yield* B.awaitExn(grandchild!);
        } finally {
          yield* B.awaitTask(child);
        }
      }),
    );
    expect(error).toBeInstanceOf(B.NotAChild);
  });

  it("is thrown in the caller, which may handle it", async () => {
    const v = await B.run(function* () {
      const a = B.spawn(function* () {
        return 1;
      });
      const b = B.spawn(function* () {
        try {
          yield* B.awaitExn(a);
          return "no error";
        } catch (e) {
          return (e as Error).name;
        }
      });
      yield* B.awaitExn(a);
      return yield* B.awaitExn(b);
    });
    expect(v).toBe("NotAChild");
  });
});
