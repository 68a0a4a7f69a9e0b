import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";

class Stuck extends Error {}

/** Gives Node's loop turns until `done()` (the run's slices take as many as a loaded machine makes them). */
async function until(done: () => boolean): Promise<void> {
  for (let turns = 0; !done(); turns++) {
    if (turns === 10_000) throw new Error("the run did not get there in 10,000 turns of Node's loop");
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** A root that cancels a child whose cleanup waits on a trigger nobody signals: cancelling it never ends. */
function stuckInCleanup(rootOf: (root: B.Task<unknown>) => void, log: string[]): () => Generator<B.Instruction, void, unknown> {
  return function* () {
    rootOf(B.self());
    const child = B.spawn(function* () {
      try {
        yield* new L.Trigger().wait();
      } finally {
        log.push("cleanup waits");
        yield* new L.Trigger().wait(); // nothing will signal it
        log.push("cleanup ended");
      }
    });
    yield* B.yieldNow();
    yield* B.cancel(child);
    log.push("root went on");
  };
}

describe("abandon", () => {
  it("settles a run whose cancelled tasks can never end, with the error given, and finalises its events backend", async () => {
    let root: B.Task<unknown> | null = null;
    const log: string[] = [];
    let finalised = 0;
    const events: L.Events = { select: () => [], interrupt: () => undefined, finaliser: () => void finalised++ };
    const run = L.runKernel(
      stuckInCleanup((r) => (root = r), log),
      { events: () => events },
    );
    const stuck = new Stuck("stuck for good");
    await until(() => log.length > 0);
    expect(log).toEqual(["cleanup waits"]);
    expect(L.abandon(root!, stuck)).toBe(true);
    await expect(run).rejects.toBe(stuck);
    expect(finalised).toBe(1);
    expect(L.abandon(root!, new Stuck("again"))).toBe(false); // the run is over: nothing to do
    expect(log).toEqual(["cleanup waits"]); // the abandoned tasks never ran again
  });

  it("keeps the failures the run had: the error given comes after them", async () => {
    let root: B.Task<unknown> | null = null;
    const first = new Error("the run's own failure");
    const controller = new AbortController();
    const log: string[] = [];
    const run = B.run(
      stuckInCleanup((r) => (root = r), log),
      { signal: controller.signal },
    );
    await until(() => log.length > 0);
    controller.abort(first); // fails the run: its root is cancelled, and waits for the stuck child
    await new Promise<void>((resolve) => setImmediate(resolve));
    const stuck = new Stuck("stuck for good");
    L.abandon(root!, stuck);
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(B.Failures);
    expect((error as B.Failures).errors).toEqual([first, stuck]);
  });

  it("refuses a call from a task of the run itself, and what is not a task", async () => {
    const refused = await B.run(function* () {
      try {
        L.abandon(B.self(), new Stuck("from inside"));
        return null;
      } catch (e) {
        return e;
      }
    });
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as Error).message).toMatch(/from outside it, and was called from one of its tasks/);
    expect(() => L.abandon({} as B.Task<unknown>, new Stuck("no task"))).toThrow(
      new TypeError("abandon(task, error) expects a task, got an object"),
    );
  });
});
