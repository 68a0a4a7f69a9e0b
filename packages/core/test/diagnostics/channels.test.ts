/** Diagnostics channels: the life of every task, and calls across domains; nothing while nobody subscribes. */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { afterEach, describe, expect, it } from "vitest";
import * as D from "../../dist-dev/index.js";
import * as B from "../../src/index.js";
import { registers } from "../../src/kernel/current.js";
import * as L from "../../src/lowlevel/index.js";
import * as F from "../fixtures/parallel-tasks.mjs";

type Message = { task: B.Task; parent?: B.Task; domain: number; status?: string; error?: unknown };

const subscriptions: [string, (message: unknown) => void][] = [];

/** Records, as lines, what the task channels publish. */
function listen(names: readonly string[], lines: string[]): void {
  for (const name of names) {
    const point = name.slice("bobbin:task:".length);
    const fn = (m: unknown): void => {
      const { task, parent, status, error } = m as Message;
      const detail =
        point === "spawn"
          ? ` by ${parent}`
          : point === "end"
            ? ` ${status}${error === undefined ? "" : ` (${(error as Error).message})`}`
            : "";
      lines.push(`${point} ${task}${detail}`);
    };
    subscribe(name, fn);
    subscriptions.push([name, fn]);
  }
}

afterEach(() => {
  for (const [name, fn] of subscriptions.splice(0)) unsubscribe(name, fn);
});

const ALL = Object.values(B.channels.task);

describe("diagnostics channels", () => {
  it("publish spawn, start, wake, cancel and end of every task, in order", async () => {
    const lines: string[] = [];
    listen(ALL, lines);
    await B.run(function* main() {
      const sleeper = B.spawn(function* sleeper() {
        yield* new L.Trigger().wait();
      });
      const failing = B.spawn(function* failing() {
        throw new Error("no");
      });
      yield* B.yieldNow();
      yield* B.cancel(sleeper);
      yield* B.awaitTask(failing);
    });
    expect(lines).toEqual([
      "start main#1",
      "spawn sleeper#2 by main#1",
      "spawn failing#3 by main#1",
      "start sleeper#2",
      "start failing#3",
      "end failing#3 failed (no)",
      "cancel sleeper#2",
      "end sleeper#2 cancelled (sleeper#2 was cancelled)",
      "wake main#1",
      "end main#1 resolved",
    ]);
  });

  it("cost nothing while nobody subscribes: the kernel has no tracer; one appears at the next slice after a subscribe", async () => {
    const seen = await B.run(function* () {
      const before = registers.kernel!.tracer;
      const lines: string[] = [];
      listen([B.channels.task.spawn], lines);
      const sameSlice = registers.kernel!.tracer;
      yield* B.promise(() => Promise.resolve()); // a new slice
      const after = registers.kernel!.tracer;
      yield* B.awaitExn(B.spawn(function* late() {}));
      return { before, sameSlice, after, lines };
    });
    expect(seen).toMatchObject({ before: null, sameSlice: null });
    expect((seen as { after: unknown }).after).not.toBeNull();
    expect((seen as { lines: string[] }).lines).toEqual(["spawn late#2 by anonymous#1"]);
  });

  it("a subscriber to one channel does not see the others", async () => {
    const lines: string[] = [];
    listen([B.channels.task.end], lines);
    await B.run(function* main() {
      yield* B.awaitExn(B.spawn(function* child() {}));
    });
    expect(lines).toEqual(["end child#2 resolved", "end main#1 resolved"]);
  });

  it("call.start and call.end tell of calls to other domains", async () => {
    const events: string[] = [];
    const onStart = (m: unknown): void => {
      const { task, name, from, domain } = m as { task: B.Task; name: string; from: number; domain: number };
      events.push(`start ${task} ${name} ${from}→${domain}`);
    };
    const onEnd = (m: unknown): void => {
      const { task, ok, error } = m as { task: B.Task; ok: boolean; error?: Error };
      events.push(`end ${task} ${ok ? "ok" : error!.message}`);
    };
    subscribe(D.channels.call.start, onStart);
    subscribe(D.channels.call.end, onEnd);
    subscriptions.push([D.channels.call.start, onStart], [D.channels.call.end, onEnd]);
    await D.run(
      function* () {
        yield* D.awaitExn(D.call({ pin: 1 }, F.double, 21));
        yield* D.awaitTask(D.call({ pin: 1 }, F.fail, "bad input"));
      },
      { domains: 1 },
    );
    expect(events).toEqual(["start double#2 double 0→1", "end double#2 ok", "start fail#3 fail 0→1", "end fail#3 bad input"]);
  });
});
