import { afterEach, describe, expect, it, vi } from "vitest";
import { exceptionJump, handleEffects, helloWorld, myProgram, nthPrime, primes } from "../../src/ch03/programs.js";
import { awaitPromise, type Effect, run, spawn } from "../../src/ch03/toy-scheduler.js";
import { runProgram } from "../support/processes.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("chapter 3: the toy scheduler on generators", () => {
  it("an exception jumps and never comes back; an effect comes back", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    exceptionJump();
    expect(log.mock.calls.map((c) => c[0])).toEqual(["Hello", "My_exception"]);
    log.mockClear();
    handleEffects(myProgram);
    expect(log.mock.calls.map((c) => c[0])).toEqual(["Hello", "My_effect", "World"]);
  });

  it("prints Hello before World: the spawned task runs in the background", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    helloWorld();
    expect(log.mock.calls.map((c) => c[0])).toEqual(["Hello", "World"]);
  });

  it("a spawned task's result comes back through its promise", () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    expect(nthPrime(1)).toBe(2);
    expect(nthPrime(100)).toBe(541);
    expect(primes(100, 1000)).toBe(541 + 7919);
  });

  it("steps the tasks in list order, one effect at a time", () => {
    const trace: string[] = [];
    function* worker(name: string, steps: number): Generator<Effect, string, unknown> {
      for (let i = 0; i < steps; i++) {
        trace.push(`${name}${i}`);
        // an await on a resolved promise continues at once; a spawn lets the task go on too
        yield* awaitPromise({ value: { some: undefined } });
      }
      return name;
    }
    const result = run(function* () {
      const a = yield* spawn(() => worker("a", 2));
      const b = yield* spawn(() => worker("b", 1));
      trace.push("main");
      return [yield* awaitPromise(a), yield* awaitPromise(b)].join("+");
    });
    expect(result).toBe("a+b");
    // A step runs a task up to its next effect, and the task goes to the back
    // of the list: main (spawn a) · main (spawn b, after a was queued) ·
    // a ("a0") · main ("main") · a ("a1") · b ("b0") · …
    expect(trace).toEqual(["a0", "main", "a1", "b0"]);
  });

  it("runs every task to its end, even those nobody awaits", () => {
    const trace: string[] = [];
    run(function* () {
      yield* spawn(function* () {
        trace.push("forgotten but run");
      });
    });
    expect(trace).toEqual(["forgotten but run"]);
  });

  it("node dist/ch03-toy-scheduler.js", async () => {
    const r = await runProgram("ch03-toy-scheduler.js");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Hello\nMy_exception\n");
    expect(r.stdout).toContain("Hello\nMy_effect\nWorld\n");
    expect(r.stdout).toMatch(/# spawn fn; print Hello; await fn\nHello\nWorld\n/);
    expect(r.stdout).toContain("= 8460");
  });
});
