/**
 * AsyncLocalStorage follows tasks: each task's steps run in the async context
 * it was spawned in, or the one it entered since, whatever woke it. Both ways
 * Node keeps stores are tested: the one this Node uses, and the other forced.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { afterEach, describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { AsyncMode, asyncMode, forceAsyncMode } from "../src/kernel/async-context.js";
import { runningKernel } from "../src/kernel/kernel.js";
import * as L from "../src/lowlevel/index.js";

const detected = asyncMode();
const als = new AsyncLocalStorage<string>();

/** Waits until a Node timer fires (a wake from a timer's callback). */
function* sleep(ms: number): Generator<B.Instruction, void, unknown> {
  const trigger = new L.Trigger();
  const timer = setTimeout(() => trigger.signal(), ms);
  try {
    yield* trigger.wait();
  } finally {
    clearTimeout(timer);
  }
}

// Capturing a task's context after each step (unheard frames) works however Node keeps stores, so
// every Node line tests it forced, beside the way it uses: sharing the run's context until a task
// writes, heard in resources (Node 20, 22) or in frames (Node 24).
const modes: readonly (readonly [string, AsyncMode])[] = [
  detected === AsyncMode.Resources
    ? ["as this Node keeps stores (in resources)", AsyncMode.Resources]
    : ["as this Node keeps stores (in frames, writes heard)", AsyncMode.HeardFrames],
  ["kept in frames, a capture after each step", AsyncMode.Frames],
];

describe.each(modes)("AsyncLocalStorage %s", (_, mode) => {
  afterEach(() => forceAsyncMode(null));
  const run = <T>(main: () => Generator<B.Instruction, T, unknown>): Promise<T> => {
    forceAsyncMode(mode);
    return B.run(main);
  };

  it("a store entered in a task is its own after every kind of wake: a timer, another task, a Promise, a child, a yield", async () => {
    const seen = await run(function* () {
      const trigger = new L.Trigger();
      const worker = B.spawn(function* () {
        als.enterWith("worker");
        const after: (string | undefined)[] = [];
        yield* sleep(1);
        after.push(als.getStore());
        yield* trigger.wait();
        after.push(als.getStore());
        yield* B.promise(() => new Promise((resolve) => setImmediate(resolve)));
        after.push(als.getStore());
        yield* B.awaitExn(
          B.spawn(function* () {
            yield* sleep(1);
          }),
        );
        after.push(als.getStore());
        yield* B.yieldNow();
        after.push(als.getStore());
        return after;
      });
      const signaller = B.spawn(function* () {
        als.enterWith("signaller");
        yield* sleep(5);
        trigger.signal();
        return als.getStore();
      });
      return { worker: yield* B.awaitExn(worker), signaller: yield* B.awaitExn(signaller), root: als.getStore() };
    });
    expect(seen).toEqual({ worker: ["worker", "worker", "worker", "worker", "worker"], signaller: "signaller", root: undefined });
  });

  it("tasks woken by one callback each resume in their own store", async () => {
    const seen = await run(function* () {
      const triggers = [new L.Trigger(), new L.Trigger(), new L.Trigger()];
      const tasks = triggers.map((trigger, i) =>
        B.spawn(function* () {
          if (i !== 1) als.enterWith(`task ${i}`);
          yield* trigger.wait();
          return als.getStore();
        }),
      );
      yield* B.yieldNow();
      setTimeout(
        () =>
          als.run("the waker", () => {
            for (const t of triggers) t.signal();
          }),
        1,
      );
      return yield* B.awaitAll(tasks);
    });
    expect(seen.map((r) => (r.ok ? r.value : "failed"))).toEqual(["task 0", undefined, "task 2"]);
  });

  it("a child takes the store it is spawned in; siblings and the parent keep theirs", async () => {
    const seen = await run(function* () {
      const before = B.spawn(function* () {
        yield* sleep(1);
        return als.getStore();
      });
      als.enterWith("parent");
      const after = B.spawn(function* () {
        yield* sleep(1);
        const grandchild = B.spawn(function* () {
          yield* sleep(1);
          return als.getStore();
        });
        return [als.getStore(), yield* B.awaitExn(grandchild)];
      });
      const inRun = als.run("inside run", () =>
        B.spawn(function* () {
          yield* sleep(1);
          return als.getStore();
        }),
      );
      const changes = B.spawn(function* () {
        als.enterWith("changed by a child");
        yield* sleep(1);
        return als.getStore();
      });
      const results = [yield* B.awaitExn(before), yield* B.awaitExn(after), yield* B.awaitExn(inRun), yield* B.awaitExn(changes)];
      return [...results, als.getStore()];
    });
    expect(seen).toEqual([undefined, ["parent", "parent"], "inside run", "changed by a child", "parent"]);
  });

  it("a store written in a step is not seen by the tasks that step after it in the same slice", async () => {
    const seen = await run(function* () {
      const writer = B.spawn(function* () {
        als.enterWith("writer");
        yield* B.yieldNow();
        return als.getStore();
      });
      const reader = B.spawn(function* () {
        const first = als.getStore();
        const child = B.spawn(function* () {
          return als.getStore();
        });
        yield* B.yieldNow();
        return [first, als.getStore(), yield* B.awaitExn(child)];
      });
      return [yield* B.awaitExn(writer), yield* B.awaitExn(reader), als.getStore()];
    });
    expect(seen).toEqual(["writer", [undefined, undefined, undefined], undefined]);
  });

  it("the run's tasks start in the store `run` was called in", async () => {
    forceAsyncMode(mode);
    const seen = await als.run("caller", () =>
      B.run(function* () {
        // Woken from a callback that runs in no store at all.
        const triggers = [new L.Trigger(), new L.Trigger()];
        const child = B.spawn(function* () {
          yield* triggers[0]!.wait();
          return als.getStore();
        });
        const other = B.spawn(function* () {
          als.enterWith("other");
          yield* triggers[1]!.wait();
          return als.getStore();
        });
        yield* B.yieldNow();
        als.exit(() =>
          setTimeout(() => {
            for (const t of triggers) t.signal();
          }, 1),
        );
        return [als.getStore(), yield* B.awaitExn(child), yield* B.awaitExn(other)];
      }),
    );
    expect(seen).toEqual(["caller", "caller", "other"]);
  });
});

describe("AsyncLocalStorage, when no task writes a store", () => {
  it("no task gets a context of its own: steps run as they would without the feature", async () => {
    const outside = new AsyncLocalStorage<number>();
    const inUse = await outside.run(1, () =>
      B.run(function* () {
        const child = B.spawn(function* () {
          yield* sleep(1);
          return outside.getStore();
        });
        expect(yield* B.awaitExn(child)).toBe(1);
        return runningKernel()!.asyncContexts.inUse;
      }),
    );
    expect(inUse).toBe(false);
  });

  it("this Node's way of keeping stores lets the kernel hear a write (it need not capture a context after each step)", () => {
    expect([AsyncMode.Resources, AsyncMode.HeardFrames]).toContain(detected);
  });
});
