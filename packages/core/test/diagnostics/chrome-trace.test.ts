/** The flight recorder as a Chrome trace (Perfetto, chrome://tracing). */

import { chromeTraceProblems } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import * as D from "../../dist-dev/index.js";
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";
import * as F from "../fixtures/parallel-tasks.mjs";

/** A run of a few tasks that wait on one another and on a timer; its trace as JSON text. */
async function traced(): Promise<string> {
  const dump = await B.run(
    function* main() {
      const ready = new L.Trigger();
      const consumer = B.spawn(function* consumer() {
        yield* ready.wait();
        yield* B.promise(() => new Promise((r) => setTimeout(r, 2)));
      });
      const producer = B.spawn(function* producer() {
        for (let i = 0; i < 3; i++) yield* B.yieldNow();
        ready.signal();
      });
      yield* B.awaitAll([consumer, producer]);
      return yield* B.promise(() => B.dump());
    },
    { flightRecorder: 1000 },
  );
  return JSON.stringify(B.chromeTrace(dump));
}

describe("chromeTrace", () => {
  it("writes a well-formed trace: a process per domain, a slice per step, waits labelled on each task's track, wakes as flows", async () => {
    const json = await traced();
    expect(chromeTraceProblems(json)).toEqual([]);
    const events = (JSON.parse(json) as B.ChromeTrace).traceEvents;
    const named = (name: string) => events.filter((e) => e.ph === "M" && e.name === name).map((e) => `${e.pid}:${e.tid} ${e.args!.name}`);
    expect(named("process_name")).toEqual(["0:0 domain 0"]);
    expect(named("thread_name")).toEqual(expect.arrayContaining(["0:0 steps", "0:2 consumer#2", "0:3 producer#3"]));
    const steps = events.filter((e) => e.ph === "X" && e.tid === 0).map((e) => e.name);
    expect(steps.filter((n) => n === "producer#3")).toHaveLength(4); // its first step and one after each yield
    const waits = events.filter((e) => e.ph === "X" && e.tid !== 0).map((e) => `${e.tid} ${e.name}`);
    expect(waits).toEqual(["2 waits: wait on a trigger", "2 waits: promise (anonymous)", "1 waits: awaitAll [consumer#2, producer#3]"]);
    // producer#3's signal woke consumer#2: an arrow from producer's step to consumer's next step
    const starts = events.filter((e) => e.ph === "s");
    expect(starts.length).toBeGreaterThanOrEqual(1);
    const flowOf = (id: number) => events.find((e) => e.ph === "f" && e.id === id)!;
    const stepAround = (ts: number) =>
      [...events].reverse().find((e) => e.ph === "X" && e.tid === 0 && e.ts <= ts && ts <= e.ts + e.dur!)!.name;
    const stepFrom = (ts: number) => events.find((e) => e.ph === "X" && e.tid === 0 && e.ts === ts)!.name;
    expect(starts.map((s) => `${stepAround(s.ts)} → ${stepFrom(flowOf(s.id!).ts)}`)).toContain("producer#3 → consumer#2");
  });

  it("draws each domain of the run as a process of its own", async () => {
    const dump = await D.run(
      function* main() {
        const n = yield* D.awaitExn(D.call(F.double, 21));
        return n === 42 ? yield* D.promise(() => D.dump()) : null;
      },
      { domains: 1, flightRecorder: 500 },
    );
    const trace = D.chromeTrace(dump!);
    expect(chromeTraceProblems(JSON.stringify(trace))).toEqual([]);
    expect(trace.traceEvents.filter((e) => e.name === "process_name").map((e) => e.args!.name)).toEqual(["domain 0", "domain 1"]);
    expect(trace.traceEvents.some((e) => e.ph === "X" && e.pid === 1 && e.name.startsWith("double#"))).toBe(true);
  });

  it("takes a dump or its flight array; refuses anything else", () => {
    expect(B.chromeTrace([]).traceEvents).toEqual([]);
    expect(() => B.chromeTrace({} as B.Dump)).toThrow(/chromeTrace\(source\) expects what B\.dump\(\) resolves to/);
  });
});
