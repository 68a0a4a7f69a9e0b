/**
 * Cycles of waits, through the seam packages use: a `Suspender` whose
 * `waitsFor()` names the task that alone can end it, parked with
 * `suspendHeld()`; and `registerInterrupter` for waits a deadline ends.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";

/** A minimal task-owned lock: a waiter names the holder. */
class Lock {
  holder: B.Task<unknown> | null = null;
  readonly waiters: Acquire[] = [];

  *acquire(): Generator<B.Instruction, void, unknown> {
    if (this.holder === null) this.holder = B.self();
    else yield* new Acquire(this);
  }
}

class Acquire extends L.Suspender<void> {
  constructor(private readonly lock: Lock) {
    super();
  }
  protected start(): IteratorResult<B.Instruction, void> {
    this.lock.waiters.push(this);
    return this.suspendHeld();
  }
  protected resume(): IteratorResult<B.Instruction, void> {
    return this.complete(undefined);
  }
  protected leave(): void {
    this.lock.waiters.splice(this.lock.waiters.indexOf(this), 1);
  }
  override describe(): string {
    return `acquire held by ${this.lock.holder}`;
  }
  override waitsFor(): B.Task<unknown> | null {
    return this.lock.holder;
  }
}

function* crossed(a: Lock, b: Lock): Generator<B.Instruction, void, unknown> {
  yield* a.acquire();
  yield* B.yieldNow();
  yield* b.acquire();
}

let unrelated: NodeJS.Timeout;
beforeEach(() => {
  unrelated = setInterval(() => {}, 1000); // a handle that keeps Node's loop from draining
});
afterEach(() => clearInterval(unrelated));

describe("cycles of waits", () => {
  it("a Suspender parked with suspendHeld whose waitsFor names the holder takes part in a cycle", async () => {
    const error = await B.run(function* main() {
      const first = new Lock();
      const second = new Lock();
      yield* B.awaitAll([B.spawn({ name: "a" }, crossed, first, second), B.spawn({ name: "b" }, crossed, second, first)]);
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(B.Deadlock);
    expect((error as B.Deadlock).cycle).toBe("a#2 (acquire held by b#3) → b#3 (acquire held by a#2) → a#2");
  });

  it("a Deadlock report shows the flight recorder's last events: how the tasks came to wait for each other", async () => {
    const error = await B.run(
      function* main() {
        const first = new Lock();
        const second = new Lock();
        yield* B.awaitAll([B.spawn({ name: "a" }, crossed, first, second), B.spawn({ name: "b" }, crossed, second, first)]);
      },
      { flightRecorder: 64 },
    ).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(B.Deadlock);
    const deadlock = error as B.Deadlock;
    const parks = deadlock.dump!.flight[0]!.events.filter((e) => e.kind === "park").map((e) => `${e.task!.name}: ${e.detail}`);
    expect(parks.slice(-2)).toEqual(["a: acquire held by b#3", "b: acquire held by a#2"]);
    expect(deadlock.message).toMatch(/flight recorder of domain 0 \(last \d+ events\):\n(.*\n)*.* park b#3: acquire held by a#2\n/);
  });

  it("a task an interrupter is armed for is in no cycle: its interrupter ends the wait", async () => {
    const armed = new Set<B.Task<unknown>>();
    L.registerInterrupter((task) => armed.has(task));
    const r = await B.run(function* main() {
      const first = new Lock();
      const second = new Lock();
      const a = B.spawn({ name: "a" }, function* () {
        const me = B.self();
        armed.add(me);
        const timer = setTimeout(() => L.interrupt(me, new Error("too slow")), 200);
        try {
          yield* crossed(first, second);
        } catch (e) {
          first.holder = null;
          return (e as Error).message;
        } finally {
          clearTimeout(timer);
          armed.delete(me);
        }
        return "locked";
      });
      const b = B.spawn({ name: "b" }, crossed, second, first);
      const result = yield* B.awaitExn(a);
      yield* B.cancel(b);
      return result;
    });
    expect(r).toBe("too slow");
  });

  it("registerInterrupter wants a function", () => {
    expect(() => L.registerInterrupter(1 as never)).toThrow(
      "registerInterrupter(armed) expects a function (task) => boolean, got number 1",
    );
  });
});
