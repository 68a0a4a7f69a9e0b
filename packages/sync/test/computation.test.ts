import { spawn as spawnProcess } from "node:child_process";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { errorOf } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Computation } from "../src/index.js";
import { forever, pause } from "./helpers.js";

/** Miou's tests complete computations with `Exit`. */
class Exit extends Error {}

/** Every order of the items of `xs`. */
function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [xs.slice()];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

describe("Computation: completion (tryReturn, tryCancel)", () => {
  it("runs until completed once; a later tryReturn or tryCancel returns false and changes nothing", () => {
    const c = Computation.create<number>();
    expect(c.isRunning).toBe(true);
    expect(c.peek()).toBeUndefined();
    expect(c.cancelled()).toBeUndefined();
    c.raiseIfErrored(); // running: nothing to raise
    expect(c.tryReturn(1)).toBe(true);
    expect(c.tryReturn(2)).toBe(false);
    expect(c.tryCancel(new Exit())).toBe(false);
    expect(c.isRunning).toBe(false);
    expect(c.peek()).toEqual({ ok: true, value: 1 });
    expect(c.cancelled()).toBeUndefined();
    c.raiseIfErrored(); // returned: nothing to raise

    const exit = new Exit();
    const d = new Computation<number>();
    expect(d.tryCancel(exit)).toBe(true);
    expect(d.tryReturn(1)).toBe(false);
    expect(d.tryCancel(new Exit())).toBe(false);
    expect(d.peek()).toEqual({ ok: false, error: exit });
    expect(d.cancelled()?.error).toBe(exit);
    expect(() => d.raiseIfErrored()).toThrow(exit);
  });

  // Miou's test_sync test02, where a model checker runs a return, a cancel and
  // two attaches in every interleaving: here each is atomic, so every order.
  it("whatever the order of a return, a cancel and two attaches, one completion wins and exactly the attached triggers are signalled", () => {
    let attachedTotal = 0;
    let unattachedTotal = 0;
    for (const order of permutations(["return", "cancel", "attach0", "attach1"] as const)) {
      const c = Computation.create<number>();
      const triggers = [new L.Trigger(), new L.Trigger()];
      let returns = 0;
      let cancels = 0;
      let attached = 0;
      let unattached = 0;
      for (const step of order) {
        if (step === "return") {
          if (c.tryReturn(101)) returns++;
        } else if (step === "cancel") {
          if (c.tryCancel(new Exit())) cancels++;
        } else if (c.tryAttach(triggers[step === "attach0" ? 0 : 1]!)) attached++;
        else unattached++;
      }
      const r = c.peek()!;
      if (r.ok) expect([r.value, returns, cancels]).toEqual([101, 1, 0]);
      else expect([r.error instanceof Exit, returns, cancels]).toEqual([true, 0, 1]);
      expect(attached + unattached).toBe(2);
      expect(triggers.filter((t) => t.isSignalled).length).toBe(attached);
      attachedTotal += attached;
      unattachedTotal += unattached;
    }
    expect(attachedTotal).toBeGreaterThan(0);
    expect(unattachedTotal).toBeGreaterThan(0);
  });

  // Miou's test_sync test03.
  it("detached triggers are signalled and leave nothing behind; a new trigger still attaches", () => {
    const c = Computation.create<number>();
    const triggers = Array.from({ length: 4 }, () => new L.Trigger());
    for (const t of triggers) {
      expect(c.tryAttach(t)).toBe(true);
      c.detach(t);
    }
    expect(triggers.every((t) => t.isSignalled)).toBe(true);
    expect(c.isRunning).toBe(true);
    expect(c.waiters).toBe(0);
    const t = new L.Trigger();
    expect(c.tryAttach(t)).toBe(true);
    expect(c.waiters).toBe(1);
    expect(t.isSignalled).toBe(false);
  });

  it("refuses a signalled trigger, and any trigger once completed; attaching twice attaches once", () => {
    const c = Computation.create<string>();
    const signalled = new L.Trigger();
    signalled.signal();
    expect(c.tryAttach(signalled)).toBe(false);
    const t = new L.Trigger();
    expect(c.tryAttach(t)).toBe(true);
    expect(c.tryAttach(t)).toBe(true);
    expect(c.waiters).toBe(1);
    c.tryReturn("done");
    expect(t.isSignalled).toBe(true);
    expect(c.waiters).toBe(0);
    expect(c.tryAttach(new L.Trigger())).toBe(false);
  });

  it("misuse is a TypeError that says what is expected", () => {
    const c = Computation.create<number>();
    expect(() => c.tryAttach({} as L.Trigger)).toThrow(/Computation.tryAttach expects a Trigger/);
    expect(() => c.detach(null as unknown as L.Trigger)).toThrow(TypeError);
    expect(() => c.tryCapture(42 as unknown as () => number)).toThrow(/Computation.tryCapture expects a function/);
    expect(() => Computation.canceller({ from: c, into: {} as Computation<number> })).toThrow(
      /canceller\(\{ into \}\) expects a Computation/,
    );
    // Awaiting a running computation parks a task: outside of one, there is none.
    expect(() => c.await()[Symbol.iterator]()).toThrow(TypeError);
  });
});

describe("Computation: tryCapture", () => {
  it("completes with what a plain or a generator function returns, or cancels with what it throws", async () => {
    await B.run(function* () {
      const plain = Computation.create<number>();
      expect(yield* plain.tryCapture((a: number, b: number) => a + b, 1, 2)).toBe(true);
      expect(plain.peek()).toEqual({ ok: true, value: 3 });

      const suspending = Computation.create<number>();
      const captured = yield* suspending.tryCapture(function* (n: number) {
        yield* B.yieldNow();
        return n * 2;
      }, 21);
      expect(captured).toBe(true);
      expect(yield* suspending.awaitExn()).toBe(42);

      const failing = Computation.create<number>();
      const exit = new Exit();
      expect(
        yield* failing.tryCapture(() => {
          throw exit;
        }),
      ).toBe(true);
      expect(failing.cancelled()?.error).toBe(exit);
    });
  });

  it("still runs the function on a completed computation, as Miou does, and drops its result or error", async () => {
    await B.run(function* () {
      const c = Computation.create<string>();
      c.tryReturn("first");
      let ran = 0;
      expect(
        yield* c.tryCapture(() => {
          ran++;
          return "second";
        }),
      ).toBe(false);
      expect(
        yield* c.tryCapture(() => {
          ran++;
          throw new Exit();
        }),
      ).toBe(false);
      expect(ran).toBe(2);
      expect(c.peek()).toEqual({ ok: true, value: "first" });
    });
  });

  // Miou's test_core test33: a long computation checks `raise_if_errored`
  // between steps; another task cancels the computation.
  it("a capture that checks raiseIfErrored stops once another task cancels the computation; awaitExn throws that error", async () => {
    let steps = 0;
    const thrown = await B.run(function* () {
      const c = Computation.create<number>();
      const fib = function* (i: number): Generator<B.Instruction, number, unknown> {
        c.raiseIfErrored();
        steps++;
        yield* B.yieldNow();
        return i <= 1 ? i : (yield* fib(i - 1)) + (i - 2);
      };
      const capturer = B.spawn(function* () {
        return yield* c.tryCapture(fib, 80);
      });
      const canceller = B.spawn(function* () {
        return c.tryCancel(new Exit());
      });
      expect(yield* B.awaitExn(canceller)).toBe(true);
      // The capture raised Exit at its next check; the computation was cancelled already.
      expect(yield* B.awaitExn(capturer)).toBe(false);
      try {
        yield* c.awaitExn();
        return null;
      } catch (error) {
        return error;
      }
    });
    expect(thrown).toBeInstanceOf(Exit);
    expect(steps).toBeLessThan(80);
  });
});

describe("Computation: await and awaitExn", () => {
  it("a completed computation is awaited without suspending", async () => {
    await B.run(function* () {
      const c = Computation.create<number>();
      c.tryReturn(7);
      let otherRan = false;
      const other = B.spawn(function* () {
        otherRan = true;
      });
      expect(yield* c.await()).toEqual({ ok: true, value: 7 });
      expect(yield* c.awaitExn()).toBe(7);
      expect(otherRan).toBe(false); // a suspension would have let it run
      yield* B.awaitExn(other);
    });
  });

  it("a waiter of a cancelled computation gets the error: a failed result from await, thrown by awaitExn", async () => {
    const exit = new Exit();
    await B.run(function* () {
      const c = Computation.create<number>();
      const viaAwait = B.spawn(function* () {
        return yield* c.await();
      });
      const viaAwaitExn = B.spawn(function* () {
        return yield* c.awaitExn();
      });
      yield* pause();
      expect(c.waiters).toBe(2);
      c.tryCancel(exit);
      expect(yield* B.awaitExn(viaAwait)).toEqual({ ok: false, error: exit });
      expect(errorOf(yield* B.awaitTask(viaAwaitExn))).toBe(exit);
      expect(viaAwait.status).toBe("resolved"); // the waiter itself was not cancelled
    });
  });

  it("10,000 waiters wake on one completion, in the order they started waiting, and nothing stays attached", async () => {
    const N = 10_000;
    const woken: number[] = [];
    await B.run(function* () {
      const c = Computation.create<string>();
      const waiters = Array.from({ length: N }, (_, i) =>
        B.spawn(function* () {
          const v = yield* c.awaitExn();
          woken.push(i);
          return v;
        }),
      );
      yield* pause();
      expect(c.waiters).toBe(N);
      expect(c.tryReturn("go")).toBe(true);
      expect(c.waiters).toBe(0);
      const rs = yield* B.awaitAll(waiters);
      expect(rs.every((r) => r.ok && r.value === "go")).toBe(true);
    });
    expect(woken).toEqual(Array.from({ length: N }, (_, i) => i));
  });

  it("a task cancelled in await or awaitExn throws Cancelled and leaves nothing attached; the others still get the value", async () => {
    await B.run(function* () {
      const c = Computation.create<number>();
      const a = B.spawn(function* () {
        return yield* c.await();
      });
      const b = B.spawn(function* () {
        return yield* c.awaitExn();
      });
      const d = B.spawn(function* () {
        return yield* c.awaitExn();
      });
      const e = B.spawn(function* () {
        return yield* c.await();
      });
      yield* pause();
      expect(c.waiters).toBe(4);
      yield* B.cancel(a);
      yield* B.cancel(b);
      expect(a.status).toBe("cancelled");
      expect(b.status).toBe("cancelled");
      expect(c.waiters).toBe(2);
      expect(c.isRunning).toBe(true); // a waiter's cancellation is not the computation's
      c.tryReturn(5);
      expect(yield* B.awaitExn(d)).toBe(5);
      expect(yield* B.awaitExn(e)).toEqual({ ok: true, value: 5 });
    });
  });

  it("a waiter woken, then cancelled before it runs, still gets the value; Cancelled arrives at its next suspension", async () => {
    let got: number | undefined;
    await B.run(function* () {
      const c = Computation.create<number>();
      const waiter = B.spawn(function* () {
        got = yield* c.awaitExn();
        yield* forever();
      });
      yield* pause();
      c.tryReturn(9);
      yield* B.cancel(waiter);
      expect(waiter.status).toBe("cancelled");
      expect(c.waiters).toBe(0);
    });
    expect(got).toBe(9);
  });

  it("a task cancelled while its tryCapture body runs cancels the computation with that Cancelled, and ends cancelled", async () => {
    let wentOn = false;
    await B.run(function* () {
      const c = Computation.create<number>();
      const capturer = B.spawn(function* () {
        yield* c.tryCapture(forever);
        wentOn = true; // a swallowed cancellation would get here
      });
      const waiter = B.spawn(function* () {
        return yield* c.await();
      });
      yield* pause();
      yield* B.cancel(capturer);
      expect(capturer.status).toBe("cancelled");
      expect(c.cancelled()?.error).toBeInstanceOf(B.Cancelled);
      const r = yield* B.awaitExn(waiter);
      expect(errorOf(r)).toBeInstanceOf(B.Cancelled);
      // A Cancelled that is not the task's own is only the computation's outcome.
      const other = Computation.create<number>();
      const notMine = new B.Cancelled("a child's outcome");
      expect(
        yield* other.tryCapture(() => {
          throw notMine;
        }),
      ).toBe(true);
      expect(other.cancelled()?.error).toBe(notMine);
    });
    expect(wentOn).toBe(false);
  });

  // Miou's test_unix test02: a handler outside the tasks (there, SIGCHLD)
  // completes the computation a task awaits.
  it("is completed by a Node callback: a child process's exit status, while other tasks run", async () => {
    let ticks = 0;
    const status = await B.run(function* () {
      const exited = Computation.create<number | null>();
      // The child exits once a tick has told it to: the ticker must run while the computation is awaited
      // (a child that exited at once could beat the ticker's first step on a loaded machine).
      const child = spawnProcess(process.execPath, ["-e", "process.stdin.once('data', () => process.exit(3))"], {
        stdio: ["pipe", "ignore", "ignore"],
      });
      child.on("exit", (code) => exited.tryReturn(code));
      const ticker = B.spawn(function* () {
        while (exited.isRunning) {
          ticks++;
          if (ticks === 1) child.stdin!.end("go");
          yield* B.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 1)));
        }
      });
      const code = yield* exited.awaitExn();
      yield* B.awaitExn(ticker);
      return code;
    });
    expect(status).toBe(3);
    expect(ticks).toBeGreaterThan(0);
  });
});

describe("Computation.canceller", () => {
  it("attached to `from`, cancels `into` with the same error when `from` is cancelled", async () => {
    const exit = new Exit();
    await B.run(function* () {
      const from = Computation.create<number>();
      const into = Computation.create<string>();
      expect(from.tryAttach(Computation.canceller({ from, into }))).toBe(true);
      const waiter = B.spawn(function* () {
        return yield* into.await();
      });
      yield* pause();
      from.tryCancel(exit);
      expect(into.cancelled()?.error).toBe(exit);
      expect(yield* B.awaitExn(waiter)).toEqual({ ok: false, error: exit });
    });
  });

  it("does nothing when `from` returns, nor when it is detached while `from` runs", () => {
    const returning = Computation.create<number>();
    const spared = Computation.create<number>();
    returning.tryAttach(Computation.canceller({ from: returning, into: spared }));
    returning.tryReturn(1);
    expect(spared.isRunning).toBe(true);

    const from = Computation.create<number>();
    const into = Computation.create<number>();
    const canceller = Computation.canceller({ from, into });
    from.tryAttach(canceller);
    from.detach(canceller);
    expect(from.waiters).toBe(0);
    from.tryCancel(new Exit());
    expect(into.isRunning).toBe(true);
  });

  it("is not for waiting: no task can wait on it", async () => {
    const c = Computation.create<number>();
    const canceller = Computation.canceller({ from: c, into: Computation.create<number>() });
    const r = await B.run(function* () {
      return yield* B.awaitTask(
        B.spawn(function* () {
          yield* canceller.wait();
        }),
      );
    });
    expect(errorOf(r)).toBeInstanceOf(TypeError);
    expect(String(errorOf(r))).toMatch(/attached to a computation with tryAttach/);
  });
});
