/** The flight recorder: the last kernel events of each domain, in dumps, in Deadlock and InternalError reports. */
import { AsyncLocalStorage } from "node:async_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import * as D from "../../dist-dev/index.js";
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";
import * as F from "../fixtures/parallel-tasks.mjs";
import { errorOf, ManualEvents, protocolBreaker, settle } from "../support/helpers.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** An event as one line: kind, task, by whom, detail. */
function line(e: B.FlightEvent): string {
  const task = e.task === null ? "" : ` ${e.task.name}#${e.task.uid}`;
  const by = e.by === null ? "" : ` by ${e.by.name}#${e.by.uid}`;
  const detail = e.detail === null ? "" : `: ${e.detail}`;
  return `${e.kind}${task}${by}${detail}`;
}

/**
 * Runs `main` with a recorder of `size` events; returns the lines of dom0's
 * ring as a dump at its end shows them. One slice runs it all (a loaded
 * machine would otherwise end slices where it likes, each an `idle`).
 */
async function recorded(
  size: number,
  main: () => Generator<B.Instruction, void, unknown>,
  options: B.RunOptions = {},
): Promise<{ lines: string[]; dropped: number }> {
  let flight: readonly B.DomainFlight[] = [];
  await B.run(
    function* root() {
      yield* main();
      flight = (yield* B.promise(() => B.dump())).flight;
    },
    { ...options, flightRecorder: size, sliceMs: 60_000 },
  );
  expect(flight.map((f) => f.domain)).toEqual([0]);
  return { lines: flight[0]!.events.map(line), dropped: flight[0]!.dropped };
}

/** A program with every kind of event of a task: spawn, start, run, park, wake, cancel, end. */
function* everyKind(): Generator<B.Instruction, void, unknown> {
  const trigger = new L.Trigger();
  const waiter = B.spawn(function* waiter() {
    yield* trigger.wait();
  });
  const sleeper = B.spawn(function* sleeper() {
    yield* new L.Trigger().wait();
  });
  yield* B.yieldNow();
  trigger.signal();
  yield* B.awaitExn(waiter);
  yield* B.cancel(sleeper);
}

describe("the flight recorder", () => {
  it("records spawn, start, each step, park with what it waits on, wake with who woke it, cancel and end, in order", async () => {
    const { lines } = await recorded(100, everyKind);
    expect(lines).toEqual([
      "run root#1",
      "start root#1",
      "spawn waiter#2 by root#1",
      "spawn sleeper#3 by root#1",
      "run waiter#2",
      "start waiter#2",
      "park waiter#2: wait on a trigger",
      "run sleeper#3",
      "start sleeper#3",
      "park sleeper#3: wait on a trigger",
      "run root#1",
      "wake waiter#2 by root#1",
      "park root#1: await waiter#2",
      "run waiter#2",
      "end waiter#2: resolved",
      "wake root#1 by waiter#2",
      "run root#1",
      "cancel sleeper#3",
      "park root#1: cancel sleeper#3",
      "run sleeper#3",
      "end sleeper#3: cancelled",
      "wake root#1 by sleeper#3",
      "run root#1", // the step that takes the dump
    ]);
  });

  it("a task cancelled before its first step has a run and an end, never a start", async () => {
    const { lines } = await recorded(100, function* () {
      const unborn = B.spawn(function* unborn() {});
      yield* B.cancel(unborn);
    });
    expect(lines).toEqual([
      "run root#1",
      "start root#1",
      "spawn unborn#2 by root#1",
      "cancel unborn#2",
      "park root#1: cancel unborn#2",
      "run unborn#2",
      "end unborn#2: cancelled",
      "wake root#1 by unborn#2",
      "run root#1",
    ]);
  });

  it("keeps the last N events in a ring and counts the ones it overwrote", async () => {
    const { lines, dropped } = await recorded(8, function* () {
      for (let i = 0; i < 50; i++) yield* B.yieldNow();
    });
    expect(lines).toHaveLength(8);
    expect(dropped).toBe(1 + 50 - 8); // root's first step (its run and start, one slot), then a run per yield
    expect(lines.at(-1)).toBe("run root#1"); // the step that took the dump
  });

  it("keeps the same last events whichever event the ring wraps at", async () => {
    const { lines: all } = await recorded(100, everyKind);
    // A task's first step is one slot, shown as its run and its start.
    const slots: string[][] = [];
    for (const l of all) {
      if (l.startsWith("start ")) slots.at(-1)!.push(l);
      else slots.push([l]);
    }
    expect(slots).toHaveLength(all.length - 3);
    // Tasks by uid alone: a task whose end the ring lost, once it left the tree, has no name.
    const uids = (lines: string[]) => lines.map((l) => l.replace(/(\(a task\)|\w+)#(\d+)/g, "#$2"));
    for (let size = 1; size < slots.length; size++) {
      const { lines, dropped } = await recorded(size, everyKind);
      expect({ size, lines: uids(lines), dropped }).toEqual({ size, lines: uids(slots.slice(-size).flat()), dropped: slots.length - size });
    }
  });

  it("records the same events when the run also reports blocking steps (which then times each step)", async () => {
    const { lines: alone } = await recorded(100, everyKind);
    const { lines } = await recorded(100, everyKind, { blockingMs: 60_000 });
    expect(alone).toHaveLength(23);
    expect(lines).toEqual(alone);
  });

  it("times events in ms since the epoch, in order", async () => {
    let events: readonly B.FlightEvent[] = [];
    const before = performance.timeOrigin + performance.now();
    await B.run(
      function* () {
        yield* B.promise(() => new Promise((r) => setTimeout(r, 20)));
        events = (yield* B.promise(() => B.dump())).flight[0]!.events;
      },
      { flightRecorder: 50 },
    );
    const times = events.map((e) => e.at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times[0]).toBeGreaterThanOrEqual(before - 1);
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(19);
  });

  it("records the points the events backend reports ready", async () => {
    const events = new ManualEvents();
    let point: L.Syscall | null = null;
    events.onBlock = () => events.ready.push(point!);
    let lines: string[] = [];
    await L.runKernel(
      function* main() {
        point = L.syscall("read fd 7");
        yield* L.suspend(point);
        lines = (yield* B.promise(() => B.dump())).flight[0]!.events.map(line);
      },
      { events: () => events, flightRecorder: 50, sliceMs: 60_000 },
    );
    expect(lines.slice(0, 6)).toEqual([
      "run main#1",
      "start main#1",
      "park main#1: syscall read fd 7",
      "io: 1 ready",
      "wake main#1",
      "run main#1",
    ]);
  });

  it("is off unless asked for: a dump has no flight, and formatDump prints none", async () => {
    const dump = await B.run(function* () {
      return yield* B.promise(() => B.dump());
    });
    expect(dump.flight).toEqual([]);
    expect(B.formatDump(dump)).not.toContain("flight recorder");
  });

  it("is printed by formatDump, after the tree", async () => {
    const text = await B.run(
      function* main() {
        yield* B.awaitExn(B.spawn(function* child() {}));
        return B.formatDump(yield* B.promise(() => B.dump()));
      },
      { flightRecorder: 100 },
    );
    const [tree, flight] = text.split("flight recorder of domain 0 (last ");
    expect(tree).toContain("main#1 — running");
    expect(flight).toMatch(/^\d+ events\):\n/);
    expect(flight).toMatch(/\n {2}\+\d+\.\d{3} ms spawn child#2 by main#1\n/);
    expect(flight).toMatch(/\n {2}\+\d+\.\d{3} ms end child#2 resolved\n/);
  });

  it("is attached to an InternalError, with its last events", async () => {
    const error = errorOf(
      await settle(
        function* main() {
          yield* protocolBreaker;
        },
        { flightRecorder: 20 },
      ),
    ) as B.InternalError;
    expect(error).toBeInstanceOf(B.InternalError);
    expect(error.flight!.events.map(line)).toEqual(["run main#1", "start main#1"]);
    expect(error.message).toContain("flight recorder of domain 0 (last 2 events):");
    const without = errorOf(
      await settle(function* main() {
        yield* protocolBreaker;
      }),
    ) as B.InternalError;
    expect(without.flight).toBeNull();
  });

  it("says how a task ended at its end, even when its parent cancels it afterwards", async () => {
    const { lines } = await recorded(100, function* () {
      const child = B.spawn(function* done() {
        return 1;
      });
      yield* B.yieldNow();
      yield* B.cancel(child); // ended already: its outcome becomes Cancelled
      expect(child.status).toBe("cancelled");
    });
    expect(lines).toContain("end done#2: resolved");
  });

  it("says each way a task ends: resolved, failed, cancelled", async () => {
    const { lines } = await recorded(100, function* () {
      yield* B.awaitTask(
        B.spawn(function* fine() {
          return 1;
        }),
      );
      yield* B.awaitTask(
        B.spawn(function* broken(): Generator<B.Instruction, void, unknown> {
          yield* B.yieldNow();
          throw new Error("boom");
        }),
      );
      const stopped = B.spawn(function* stopped() {
        yield* new L.Trigger().wait();
      });
      yield* B.yieldNow();
      yield* B.cancel(stopped);
    });
    expect(lines.filter((l) => l.startsWith("end "))).toEqual(["end fine#2: resolved", "end broken#3: failed", "end stopped#4: cancelled"]);
  });

  it("names a task that ended and left the tree without keeping it alive", async () => {
    let collected = false;
    const { lines } = await recorded(100, function* () {
      const ref = yield* (function* () {
        const child = B.spawn(function* shortLived() {
          return new Array<number>(1000).fill(1);
        });
        // It ends before its parent awaits it: a park on it would keep it (the ring keeps what a task waits on).
        yield* B.yieldNow();
        yield* B.awaitExn(child);
        return new WeakRef(child);
      })();
      // A later macrotask: a WeakRef's target is kept until the job that made it ends.
      collected = yield* B.promise(
        () =>
          new Promise<boolean>((resolve) =>
            setTimeout(() => {
              gc();
              resolve(ref.deref() === undefined);
            }, 0),
          ),
      );
    });
    expect(collected).toBe(true);
    expect(lines).toContain("end shortLived#2: resolved");
  });

  it("names every ended task of the ring when names change from one end to the next, long after the ring wrapped", async () => {
    const bodies = [function* alpha() {}, function* beta() {}];
    const { lines } = await recorded(40, function* () {
      for (let i = 0; i < 500; i++) {
        // Two bodies and a name given at spawn, in an order that repeats every 3 × 2 ends.
        const child = i % 3 === 2 ? B.spawn({ name: `named${i % 2}` }, bodies[i % 2]!) : B.spawn(bodies[i % 2]!);
        yield* B.awaitExn(child);
      }
    });
    const ends = lines.filter((l) => l.startsWith("end "));
    expect(ends.length).toBeGreaterThan(5);
    for (const end of ends) {
      const uid = Number(/#(\d+)/.exec(end)![1]);
      const i = uid - 2; // the root is #1
      expect(end).toBe(`end ${i % 3 === 2 ? `named${i % 2}` : i % 2 === 0 ? "alpha" : "beta"}#${uid}: resolved`);
    }
  });

  it("places an ended task's events on the domain it ran on when domains are simulated", async () => {
    const dump = await D.run(
      function* main() {
        const n = yield* D.awaitExn(D.call(F.double, 21));
        return n === 42 ? yield* D.promise(() => D.dump()) : null;
      },
      { domains: 1, simulateDomains: true, flightRecorder: 200 },
    );
    const events = dump!.flight[0]!.events;
    const of = (name: string) => [...new Set(events.filter((e) => e.task?.name === name).map((e) => `${e.kind}@${e.domain}`))];
    expect(of("double")).toEqual(["spawn@1", "run@1", "start@1", "end@1"]);
    expect(of("main")).toContain("park@0");
  });

  it("keeps one ring per domain: a worker domain's comes with B.dump()", async () => {
    const flags = new SharedArrayBuffer(8);
    const dump = await D.run(
      function* main() {
        const call = D.call(F.sleeper, flags);
        while (Atomics.load(new Int32Array(flags), 0) === 0) yield* D.promise(() => new Promise((r) => setTimeout(r, 5)));
        const d = yield* D.promise(() => D.dump());
        yield* D.cancel(call);
        return d;
      },
      { domains: 1, flightRecorder: 200 },
    );
    expect(dump.flight.map((f) => f.domain)).toEqual([0, 1]);
    const worker = dump.flight[1]!.events;
    expect(worker.every((e) => e.domain === 1)).toBe(true);
    expect(worker.some((e) => e.kind === "park" && e.task!.name === "sleeper" && e.detail!.includes("promise"))).toBe(true);
  });

  it("steps each task in its own AsyncLocalStorage store, as a run that records nothing does", async () => {
    const als = new AsyncLocalStorage<string>();
    for (const options of [{ flightRecorder: 64 }, { blockingMs: 1000 }, { flightRecorder: 64, blockingMs: 1000 }]) {
      const seen = await B.run(function* main() {
        const child = B.spawn(function* child() {
          als.enterWith("the child's");
          yield* B.yieldNow();
          const afterYield = als.getStore();
          yield* B.promise(() => new Promise((resolve) => setTimeout(resolve, 1)));
          return [afterYield, als.getStore()];
        });
        return yield* B.awaitExn(child);
      }, options);
      expect(seen, JSON.stringify(options)).toEqual(["the child's", "the child's"]);
    }
    als.disable();
  });

  it("refuses a size that is not a count of events", () => {
    expect(() => B.run(function* () {}, { flightRecorder: 0 })).toThrow(
      /run\(\{ flightRecorder \}\) must be an integer from 1 to 1048576, got number 0/,
    );
    expect(() => B.run(function* () {}, { flightRecorder: 1.5 })).toThrow(RangeError);
  });
});
