/** Telling a task that keeps its domain (run's blockingMs), and yieldIfDue for CPU loops. */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { afterEach, describe, expect, it } from "vitest";
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";

interface Blocked {
  readonly task: B.Task<unknown>;
  readonly domain: number;
  readonly ms: number;
  readonly thresholdMs: number;
  readonly resumedFrom: string;
}

/** Keeps the thread busy for `ms`, without yielding. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const undo: (() => void)[] = [];
afterEach(() => {
  for (const u of undo.splice(0)) u();
});

/** What the blocked channel and process warnings report while the test lasts, in order, with the other tasks' steps. */
function listen(log: string[]): { messages: Blocked[]; warnings: Error[] } {
  const messages: Blocked[] = [];
  const warnings: Error[] = [];
  const onMessage = (m: unknown): void => {
    messages.push(m as Blocked);
    log.push(`reported ${(m as Blocked).task} after ${(m as Blocked).ms >= 60 ? "60 ms or more" : "less"}`);
  };
  const onWarning = (w: Error): void => {
    if ((w as { code?: string }).code === "BOBBIN_BLOCKING") warnings.push(w);
  };
  subscribe(B.channels.task.blocked, onMessage);
  process.on("warning", onWarning);
  undo.push(() => unsubscribe(B.channels.task.blocked, onMessage));
  undo.push(() => process.off("warning", onWarning));
  return { messages, warnings };
}

/** Process warnings are emitted on the next tick: wait for them. */
const warningsDelivered = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("blocking-task detection", () => {
  it("reports a step longer than blockingMs as it ends, before any other task runs: the task, its domain, where it resumed", async () => {
    const log: string[] = [];
    const { messages, warnings } = listen(log);
    await B.run(
      function* main() {
        const trigger = new L.Trigger();
        const hog = B.spawn(function* hog() {
          yield* trigger.wait();
          spin(60);
        });
        const other = B.spawn(function* other() {
          for (let i = 0; i < 3; i++) {
            log.push(`other step ${i}`);
            yield* B.yieldNow();
          }
        });
        yield* B.yieldNow();
        trigger.signal();
        yield* B.awaitAll([hog, other]);
      },
      { blockingMs: 25 },
    );
    await warningsDelivered();
    // Only the long step is sure to be reported: on a loaded machine, a short one the process was
    // descheduled in may be too (it kept its domain as long, for all the domain could tell).
    const long = messages.filter((m) => String(m.task) === "hog#2" && m.ms >= 60);
    expect(long).toHaveLength(1);
    const [m] = long;
    expect(String(m!.task)).toBe("hog#2");
    expect(m!.domain).toBe(0);
    expect(m!.thresholdMs).toBe(25);
    expect(m!.ms).toBeGreaterThanOrEqual(60);
    expect(m!.resumedFrom).toBe("waiting on wait on a trigger");
    // reported when the step ended: before the other task's next step
    expect(log.indexOf("reported hog#2 after 60 ms or more")).toBeLessThan(log.indexOf("other step 2"));
    const hogs = warnings.filter((w) => w.message.startsWith("hog#2 "));
    expect(hogs).toHaveLength(1);
    expect(hogs[0]!.message).toMatch(
      /^hog#2 ran \d+\.\d ms on domain 0 without yielding \(more than run's blockingMs, 25 ms\), from (waiting on wait on a trigger|its first step); .*yieldIfDue/,
    );
  });

  it("says where a step began: the task's first step, or a yield", async () => {
    const { messages } = listen([]);
    await B.run(
      function* main() {
        yield* B.awaitExn(
          B.spawn(function* first() {
            spin(30);
            yield* B.yieldNow();
            spin(30);
          }),
        );
      },
      { blockingMs: 15 },
    );
    const long = messages.filter((m) => String(m.task) === "first#2" && m.ms >= 30);
    expect(long.map((m) => `${m.task} from ${m.resumedFrom}`)).toEqual(["first#2 from its first step", "first#2 from a yield"]);
  });

  it("publishes every report but warns once per task", async () => {
    const { messages, warnings } = listen([]);
    await B.run(
      function* main() {
        for (let i = 0; i < 3; i++) {
          spin(20);
          yield* B.yieldNow();
        }
      },
      { blockingMs: 10 },
    );
    await warningsDelivered();
    expect(messages.filter((m) => String(m.task) === "main#1" && m.ms >= 20).length).toBe(3);
    expect(warnings.filter((w) => w.message.startsWith("main#1 ")).length).toBe(1);
  });

  it("reports nothing while steps are short, nor without blockingMs", async () => {
    const { messages, warnings } = listen([]);
    await B.run(
      function* main() {
        for (let i = 0; i < 1000; i++) yield* B.yieldNow();
      },
      { blockingMs: 1000 },
    );
    await B.run(function* main() {
      spin(30);
      yield* B.yieldNow();
    });
    await warningsDelivered();
    expect(messages).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it("refuses a threshold that is not a whole number of ms", () => {
    expect(() => B.run(function* () {}, { blockingMs: 0 })).toThrow(
      /run\(\{ blockingMs \}\) must be an integer from 1 to 3600000, got number 0/,
    );
    expect(() => B.run(function* () {}, { blockingMs: "5" as never })).toThrow(RangeError);
  });
});

describe("yieldIfDue", () => {
  it("yields only once the slice is spent: a CPU loop lets the other tasks run, without yielding every iteration", async () => {
    let iterations = 0;
    let otherRan = false;
    const flight = await B.run(
      function* main() {
        const loop = B.spawn(function* loop() {
          // Runs until the other task had a turn, which it gets only when the loop yields, and for at
          // least 100,000 iterations: a short first slice (the process descheduled under load for
          // longer than the slice) then cannot bring the iterations per step below the bound.
          while ((!otherRan || iterations < 100_000) && iterations < 1e9) {
            iterations++;
            yield* B.yieldIfDue();
          }
        });
        const other = B.spawn(function* other() {
          otherRan = true;
        });
        yield* B.awaitAll([loop, other]);
        return (yield* B.promise(() => B.dump())).flight[0]!;
      },
      { sliceMs: 5, flightRecorder: 10_000 },
    );
    const loopSteps = flight.events.filter((e) => e.kind === "run" && e.task!.name === "loop").length;
    expect(iterations).toBeLessThan(1e9); // the other task ran while the loop was still looping
    expect(loopSteps).toBeGreaterThanOrEqual(2); // it yielded, and the other task ran meanwhile
    expect(iterations / loopSteps).toBeGreaterThan(100); // far fewer yields than iterations
  });

  it("returns at once within a slice", async () => {
    let steps = 0;
    await L.runKernel(
      function* main() {
        for (let i = 0; i < 1000; i++) yield* B.yieldIfDue();
      },
      { sliceMs: 60_000, tracer: { start: () => steps++ } },
    );
    const flight = await B.run(
      function* main() {
        for (let i = 0; i < 1000; i++) yield* B.yieldIfDue();
        return (yield* B.promise(() => B.dump())).flight[0]!;
      },
      { sliceMs: 60_000, flightRecorder: 100 },
    );
    expect(steps).toBe(1);
    expect(flight.events.filter((e) => e.kind === "run")).toHaveLength(1); // its one step, which takes the dump
  });

  it("yields at once when the task's cancellation was asked for, so that a loop over it stops", async () => {
    let iterations = 0;
    await B.run(function* main() {
      const trigger = new L.Trigger();
      const loop = B.spawn(function* loop() {
        yield* trigger.wait();
        for (;;) {
          iterations++;
          yield* B.yieldIfDue();
        }
      });
      yield* B.yieldNow();
      trigger.signal(); // it resumes with its result, and is cancelled at its next suspension
      yield* B.cancel(loop);
    });
    expect(iterations).toBe(1);
  });

  it("throws outside a task", () => {
    expect(() => B.yieldIfDue()[Symbol.iterator]().next()).toThrow(/yieldIfDue\(\) must be called from inside a task/);
  });
});
