import { spawn } from "node:child_process";
import { EventEmitter, once } from "node:events";
import { describe, expect, it } from "vitest";
import {
  chromeTraceProblems,
  delay,
  errorOf,
  failure,
  handleCount,
  listenerCounts,
  noProcFds,
  openFds,
  openFdsOf,
  prng,
  processGone,
  procFds,
  thrownBy,
  until,
  waitsOf,
} from "../src/index.js";

describe("the error of what must fail", () => {
  it("errorOf: a failed result's error; a success fails, naming its value", () => {
    const boom = new Error("boom");
    expect(errorOf({ ok: false, error: boom })).toBe(boom);
    expect(() => errorOf({ ok: true, value: 42 })).toThrow("expected a failure, got 42");
  });

  it("thrownBy: what a call throws, or the first step of the operation it returns", () => {
    expect(thrownBy(() => JSON.parse("{")).name).toBe("SyntaxError");
    const lazy = function* () {
      throw new RangeError("checked when it starts");
    };
    expect(thrownBy(() => lazy()).message).toBe("checked when it starts");
    expect(() => thrownBy(() => 1)).toThrow("expected an error, and nothing was thrown");
  });

  it("failure: in a generator, what the operation threw; a success fails", () => {
    function* fails(): Generator<number, void, unknown> {
      yield 1;
      throw Object.assign(new Error("refused"), { code: "ECONNREFUSED" });
    }
    const run = failure(() => fails());
    expect(run.next()).toEqual({ done: false, value: 1 });
    expect(run.next().value).toMatchObject({ code: "ECONNREFUSED" });
    const succeeds = failure(function* () {
      yield 1;
    });
    succeeds.next();
    expect(() => succeeds.next()).toThrow("expected the operation to fail, and it succeeded");
  });
});

describe("waiting", () => {
  it("until: returns once the condition holds; says what it waited for when it never does", async () => {
    let n = 0;
    setTimeout(() => (n = 1), 10);
    await until(() => n === 1);
    await expect(until(() => false, { ms: 20, what: "nothing" })).rejects.toThrow("waited 20 ms for nothing, in vain");
  });
});

describe("counting", () => {
  it("handleCount: Node's timers while one is armed", async () => {
    const before = handleCount("Timeout");
    const t = setTimeout(() => {}, 1000);
    expect(handleCount("Timeout")).toBe(before + 1);
    clearTimeout(t);
    await delay(1);
    expect(handleCount()).toBeGreaterThanOrEqual(0);
  });

  it("listenerCounts: by event", () => {
    const e = new EventEmitter();
    e.on("data", () => {});
    e.on("data", () => {});
    e.once("end", () => {});
    expect(listenerCounts(e)).toEqual({ data: 2, end: 1 });
  });

  it.skipIf(!procFds)(`openFds, openFdsOf: this process's descriptors${noProcFds}`, () => {
    expect(openFds()).toBeGreaterThan(2);
    expect(openFds(() => true)).toBe(0);
    expect(openFdsOf("no descriptor is this")).toBe(0);
  });

  it("waitsOf: what each task below the root waits on", () => {
    const dump = {
      tasks: [
        {
          children: [
            { name: "reader", waitsOn: "read tcp4" },
            { name: "idle", waitsOn: null },
          ],
        },
      ],
    };
    expect(waitsOf(dump)).toEqual({ reader: "read tcp4", idle: null });
  });

  it("prng: the same numbers for the same seed, in [0, 1)", () => {
    const a = prng(7);
    const b = prng(7);
    const xs = Array.from({ length: 100 }, a);
    expect(Array.from({ length: 100 }, b)).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});

describe("processGone", () => {
  it("false while a child runs, true once it has exited and been reaped", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    await once(child, "spawn");
    expect(processGone(child.pid!)).toBe(false);
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
    await until(() => processGone(child.pid!));
    expect(processGone(child.pid!)).toBe(true);
  });
});

describe("chromeTraceProblems", () => {
  const trace = (...traceEvents: object[]) => JSON.stringify({ traceEvents });
  const base = { name: "a", pid: 0, tid: 0, ts: 1 };
  it("passes a well-formed trace", () => {
    expect(chromeTraceProblems(trace({ ...base, ph: "X", dur: 2 }, { ...base, ph: "B" }, { ...base, ph: "E", ts: 2 }))).toEqual([]);
  });
  it("finds what is wrong", () => {
    expect(chromeTraceProblems("{")[0]).toMatch(/^not JSON/);
    expect(chromeTraceProblems(trace({ ...base, ph: "X" }))).toEqual([expect.stringMatching(/a complete slice needs a dur/)]);
    expect(chromeTraceProblems(trace({ ...base, ph: "B" }))).toEqual(["track 0:0: 1 slice(s) never end"]);
    expect(chromeTraceProblems(trace({ ...base, ph: "E" }))).toEqual([expect.stringMatching(/ends a slice that never began/)]);
    expect(chromeTraceProblems(trace({ ...base, ph: "s", id: 1 }))).toEqual(["flow 1 has no end (f)"]);
    expect(chromeTraceProblems(trace({ ...base, ph: "s", id: 1, ts: 5 }, { ...base, ph: "f", id: 1 }))).toEqual([
      "flow 1 ends before it starts",
    ]);
    expect(chromeTraceProblems(trace({ ph: "X", dur: 1, pid: "0", tid: 0, ts: -1 }))).toHaveLength(3);
  });
});
