/** B.stats (each domain's load on this thread) and the wake channel, which metrics exporters read. */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { describe, expect, it } from "vitest";
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";

describe("stats", () => {
  it("counts each run's live and ready tasks, now", async () => {
    expect(B.stats()).toEqual([]);
    const seen = await B.run(function* main() {
      const triggers = [new L.Trigger(), new L.Trigger(), new L.Trigger()];
      const children = triggers.map((trigger) =>
        B.spawn(function* child() {
          yield* trigger.wait();
        }),
      );
      const beforeTheyRun = B.stats();
      yield* B.yieldNow();
      const parked = B.stats();
      for (const trigger of triggers) trigger.signal();
      yield* B.awaitAll(children);
      return [beforeTheyRun, parked, B.stats()];
    });
    expect(seen).toEqual([[{ domain: 0, tasks: 4, ready: 3 }], [{ domain: 0, tasks: 4, ready: 0 }], [{ domain: 0, tasks: 1, ready: 0 }]]);
    expect(B.stats()).toEqual([]);
  });

  it("counts the ready tasks under a scheduling policy too", async () => {
    const ready = await L.runKernel(
      function* main() {
        const children = [0, 1, 2, 3, 4].map(() => B.spawn(function* child() {}));
        const n = B.stats()[0]!.ready;
        yield* B.awaitAll(children);
        return n;
      },
      { policy: { pick: () => 0 } },
    );
    expect(ready).toBe(5);
  });
});

describe("the wake channel", () => {
  it("publishes each wake with the task and its domain, while subscribed", async () => {
    const woken: string[] = [];
    const listener = (m: unknown): void => {
      const { task, domain } = m as { task: B.Task; domain: number };
      woken.push(`${task}@${domain}`);
    };
    subscribe(B.channels.task.wake, listener);
    try {
      await B.run(function* main() {
        const trigger = new L.Trigger();
        const child = B.spawn(function* child() {
          yield* trigger.wait();
        });
        yield* B.yieldNow();
        trigger.signal();
        yield* B.awaitExn(child);
      });
    } finally {
      unsubscribe(B.channels.task.wake, listener);
    }
    expect(woken).toEqual(["child#2@0", "main#1@0"]);
  });
});
