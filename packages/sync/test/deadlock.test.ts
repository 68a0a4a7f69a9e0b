// Cycles of waits among tasks (locks held, children awaited) are told as
// `Deadlock` even while unrelated Node handles keep the process alive (an
// interval here, and the test runner's own); waits that something can still
// end are left alone.
import * as B from "@bobbin/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Condition, Mutex } from "../src/index.js";
import { pause } from "./helpers.js";

let unrelated: NodeJS.Timeout;
let warnings: string[];
const onWarning = (w: Error & { code?: string }): void => {
  if (w.code === "BOBBIN_DEADLOCK") warnings.push(w.message);
};

beforeEach(() => {
  unrelated = setInterval(() => {}, 1000);
  warnings = [];
  process.on("warning", onWarning);
});
afterEach(() => {
  clearInterval(unrelated);
  process.off("warning", onWarning);
});

async function deadlockOf(main: () => Generator<B.Instruction, unknown, unknown>): Promise<B.Deadlock> {
  const error = await B.run(main).then(
    () => new Error("the run resolved"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(B.Deadlock);
  return error as B.Deadlock;
}

describe("Deadlock: cycles of waits", () => {
  it("two tasks that take two mutexes in opposite orders: the run fails, the cycle and the tree are named", async () => {
    const error = await deadlockOf(function* main() {
      const first = new Mutex();
      const second = new Mutex();
      const a = B.spawn({ name: "a" }, function* () {
        yield* first.lock();
        yield* pause();
        yield* second.lock();
      });
      const b = B.spawn({ name: "b" }, function* () {
        yield* second.lock();
        yield* pause();
        yield* first.lock();
      });
      yield* B.awaitAll([a, b]);
    });
    expect(error.cycle).toMatch(/^a#2 \(lock Mutex#\d+ held by b#3\) → b#3 \(lock Mutex#\d+ held by a#2\) → a#2$/);
    expect(error.message).toContain(`in a cycle and no task is left to break it: ${error.cycle}`);
    expect(error.message).toContain("Take locks in one order everywhere");
    expect(error.dump?.tasks.map((t) => t.name)).toEqual(["main"]);
    expect(error.message).toMatch(/├─ a#2 — waiting: lock Mutex#\d+ held by b#3\n└─ b#3 — waiting: lock Mutex#\d+ held by a#2/);
  });

  it("a task that awaits a child while holding the lock the child needs", async () => {
    const error = await deadlockOf(function* main() {
      const m = new Mutex();
      yield* m.lock();
      yield* B.awaitTask(
        B.spawn({ name: "child" }, function* () {
          yield* m.lock();
        }),
      );
    });
    expect(error.cycle).toMatch(/^main#1 \(await child#2\) → child#2 \(lock Mutex#\d+ held by main#1\) → main#1$/);
    expect(error.message).toContain("never await a child while holding a lock it needs");
  });

  it("a cycle that cancelling cannot break (a Condition's waiter takes the mutex back): the run still settles with Deadlock", async () => {
    const error = await deadlockOf(function* main() {
      const m = new Mutex();
      const c = new Condition();
      const waiter = B.spawn({ name: "waiter" }, function* () {
        yield* m.lock();
        yield* c.wait(m);
      });
      yield* pause(2);
      yield* m.lock();
      yield* B.cancel(waiter); // the waiter must lock m again to end: it never can
    });
    expect(error.cycle).toMatch(/^main#1 \(cancel waiter#2\) → waiter#2 \(lock Mutex#\d+ held by main#1\) → main#1$/);
  });

  it("a cycle that a task above it can still break is a warning, and the run goes on", async () => {
    const r = await B.run(function* () {
      const first = new Mutex();
      const second = new Mutex();
      const stuck = B.spawn({ name: "stuck" }, function* () {
        const a = B.spawn({ name: "a" }, function* () {
          yield* first.lock();
          yield* pause();
          yield* second.lock();
        });
        yield* second.lock();
        yield* pause();
        yield* first.lock();
        yield* B.awaitTask(a);
      });
      // The root waits with a deadline, then cancels the stuck task.
      yield* B.select([B.timeout(300)]);
      yield* B.cancel(stuck);
      return "went on";
    });
    expect(r).toBe("went on");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/stuck#2 \(lock Mutex#\d+ held by a#3\) → a#3 \(lock Mutex#\d+ held by stuck#2\) → stuck#2/);
    expect(warnings[0]).toContain("Only a task above them can end this");
  });

  it("contended locks whose holder goes on are no deadlock, however long the queue", async () => {
    const r = await B.run(function* () {
      const m = new Mutex();
      let inside = 0;
      const tasks = Array.from({ length: 20 }, () =>
        B.spawn(function* () {
          yield* m.protect(function* () {
            inside++;
            yield* B.select([B.timeout(5)]);
          });
        }),
      );
      yield* B.awaitAll(tasks);
      return inside;
    });
    expect(r).toBe(20);
    expect(warnings).toEqual([]);
  });

  it("a Condition waited on under a lock is no cycle: anyone may signal it", async () => {
    const r = await B.run(function* () {
      const m = new Mutex();
      const c = new Condition();
      let ready = false;
      const waiter = B.spawn(function* () {
        yield* m.protect(function* () {
          while (!ready) yield* c.wait(m);
        });
        return "woken";
      });
      yield* B.select([B.timeout(100)]);
      yield* m.protect(() => {
        ready = true;
        c.signal();
      });
      return yield* B.awaitExn(waiter);
    });
    expect(r).toBe("woken");
    expect(warnings).toEqual([]);
  });
});
