import * as B from "@bobbin/core";
import { Condition, Mutex } from "@bobbin/sync";
import { thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { onSignal, run, sleep, withTimeout } from "../src/index.js";

const SIG = "SIGUSR2";

/** Sleeps until `condition` holds (10 s at most: a signal reaches a loaded process late, not that late). */
function* until(condition: () => boolean): Generator<B.Instruction, void, unknown> {
  for (const deadline = Date.now() + 10_000; !condition(); yield* sleep(0.002)) {
    if (Date.now() > deadline) throw new Error("waited 10 s for the handler to run");
  }
}

describe("onSignal", () => {
  it("runs the handler as a task on dom0, which can use a Mutex and Condition (the book's SIGINT server)", async () => {
    const listeners = process.listenerCount(SIG);
    const result = await run(function* () {
      const m = new Mutex();
      const c = new Condition();
      let stop = false;
      const seen: string[] = [];
      onSignal(SIG, function* (signal) {
        seen.push(`${signal} in task ${B.self().uid} on domain ${B.Domain.self()}`);
        yield* sleep(0.001);
        yield* m.protect(() => {
          stop = true;
          c.broadcast();
        });
      });
      expect(process.listenerCount(SIG)).toBe(listeners + 1);
      const waiter = B.spawn(function* () {
        yield* m.protect(function* () {
          while (!stop) yield* c.wait(m);
        });
        return "stopped";
      });
      yield* sleep(0.01);
      process.kill(process.pid, SIG);
      const r = yield* withTimeout(5, B.awaitExn(waiter));
      return { r, seen };
    });
    expect(result.r).toBe("stopped");
    expect(result.seen).toHaveLength(1);
    expect(result.seen[0]).toMatch(/^SIGUSR2 in task \d+ on domain 0$/);
    expect(process.listenerCount(SIG)).toBe(listeners); // removed at the end of the run
  });

  it("a run that set a handler settles with nothing of it left in Node's loop (its keep-alive port closed)", async () => {
    const ports = (): number => process.getActiveResourcesInfo().filter((r) => r === "MessagePort").length;
    const before = ports();
    await run(function* () {
      onSignal(SIG, function* () {});
      expect(ports()).toBe(before + 1);
      yield* sleep(0.001);
    });
    expect(ports()).toBe(before);
  });

  it("so does a run whose last handler was removed as it ended (the port still closing then)", async () => {
    const ports = (): number => process.getActiveResourcesInfo().filter((r) => r === "MessagePort").length;
    const before = ports();
    await run(function* () {
      const off = onSignal(SIG, function* () {});
      yield* sleep(0.001);
      off();
    });
    expect(ports()).toBe(before);
  });

  it("runs the handler once per signal; the returned function removes it", async () => {
    const listeners = process.listenerCount(SIG);
    await run(function* () {
      let calls = 0;
      const off = onSignal(SIG, function* () {
        calls++;
      });
      for (let i = 0; i < 3; i++) {
        process.kill(process.pid, SIG);
        // The handler runs once Node's loop has read the signal: on a loaded machine, later than any fixed sleep.
        yield* until(() => calls > i);
      }
      yield* sleep(0.02); // room for a wrong second run of a handler
      expect(calls).toBe(3);
      off();
      expect(process.listenerCount(SIG)).toBe(listeners);
      // replacing a handler
      onSignal(SIG, function* () {
        calls += 10;
      });
      onSignal(SIG, function* () {
        calls += 100;
      });
      process.kill(process.pid, SIG);
      yield* until(() => calls > 3);
      yield* sleep(0.02); // room for the replaced handler to run too, were it still there
      expect(calls).toBe(103);
    });
    expect(process.listenerCount(SIG)).toBe(listeners);
  });

  it("handlers run outside main's tree: main may return while one waits, which is then cancelled", async () => {
    let handler: B.Task<unknown> | null = null;
    let cleanedUp = false;
    const value = await run(function* () {
      const main = B.self();
      onSignal(SIG, function* () {
        handler = B.self();
        try {
          yield* sleep(3600);
        } finally {
          cleanedUp = true;
        }
      });
      process.kill(process.pid, SIG);
      while (handler === null) yield* sleep(0.005);
      for (let t: B.Task<unknown> | null = handler; t !== null; t = t.parent) expect(t === main).toBe(false);
      expect(main.parent).toBeNull();
      return "main done";
    });
    expect(value).toBe("main done");
    expect(cleanedUp).toBe(true);
    expect(handler!.status).toBe("cancelled");
  });

  it("a failing handler fails the run and cancels main", async () => {
    let mainCleanedUp = false;
    await expect(
      run(function* () {
        onSignal(SIG, function* () {
          throw new Error("handler failed");
        });
        try {
          process.kill(process.pid, SIG);
          yield* sleep(5);
        } finally {
          mainCleanedUp = true;
        }
      }),
    ).rejects.toThrow("handler failed");
    expect(mainCleanedUp).toBe(true);
  });

  it("checks its arguments", async () => {
    await run(function* () {
      expect(thrownBy(() => onSignal("SIGNOPE" as NodeJS.Signals, function* () {}))).toBeInstanceOf(TypeError);
      expect(thrownBy(() => onSignal("SIGKILL", function* () {}))).toBeInstanceOf(TypeError);
      expect(thrownBy(() => onSignal(SIG, "handler" as never))).toBeInstanceOf(TypeError);
    });
    expect(thrownBy(() => onSignal(SIG, function* () {}))).toBeInstanceOf(TypeError); // outside a run
  });

  it("a handler that is not a generator function fails the run with a TypeError", async () => {
    await expect(
      run(function* () {
        onSignal(SIG, (() => 1) as never);
        process.kill(process.pid, SIG);
        yield* sleep(5);
      }),
    ).rejects.toThrow(/generator function/);
  });
});
