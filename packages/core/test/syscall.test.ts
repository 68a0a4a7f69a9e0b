/** Suspension points and the events contract. */
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { errorOf, ManualEvents, PromiseEvents, settle } from "./support/helpers.js";

describe("events", () => {
  it("select gets block = true when only suspended tasks remain, and wakes the task it signals", async () => {
    const events = new ManualEvents();
    let point: L.Syscall | null = null;
    events.onBlock = () => events.ready.push(point!);
    const value = await L.runKernel(
      function* () {
        point = L.syscall("test");
        yield* L.suspend(point);
        return "woken";
      },
      { events: () => events },
    );
    expect(value).toBe("woken");
    expect(events.selects.some((s) => s.block)).toBe(true);
    expect(events.finalised).toBe(1);
  });

  it("polls without blocking every pollEvery steps while syscalls are pending", async () => {
    const events = new ManualEvents();
    let point: L.Syscall | null = null;
    events.onBlock = () => events.ready.push(point!);
    await L.runKernel(
      function* () {
        const busy = B.spawn(function* () {
          for (let i = 0; i < 100; i++) yield* B.yieldNow();
        });
        point = L.syscall();
        yield* L.suspend(point);
        yield* B.awaitExn(busy);
      },
      { events: () => events, pollEvery: 10 },
    );
    expect(events.selects.filter((s) => !s.block).length).toBeGreaterThanOrEqual(5);
  });

  it("runs the register callback once the task is parked", async () => {
    const events = new ManualEvents();
    const registered: number[] = [];
    await L.runKernel(
      function* () {
        const s = L.syscall();
        yield* L.suspend(s, (p) => {
          registered.push(L.uid(p));
          events.ready.push(p);
        });
        expect(registered).toEqual([L.uid(s)]);
      },
      { events: () => events },
    );
  });

  it("reports a cancelled syscall's uid exactly once", async () => {
    const events = new ManualEvents();
    let uid = -1;
    await L.runKernel(
      function* () {
        const t = B.spawn(function* () {
          const s = L.syscall();
          uid = L.uid(s);
          yield* L.suspend(s);
        });
        yield* B.yieldNow();
        yield* B.cancel(t);
        // keep the domain busy with another syscall so select runs again
        const s2 = L.syscall();
        events.ready.push(s2);
        yield* L.suspend(s2);
        const s3 = L.syscall();
        events.ready.push(s3);
        yield* L.suspend(s3);
      },
      { events: () => events },
    );
    const reports = events.selects.flatMap((s) => s.cancelled);
    expect(reports).toEqual([uid]);
  });

  it("a signal for a cancelled syscall is ignored", async () => {
    const events = new ManualEvents();
    let s: L.Syscall | null = null;
    await L.runKernel(
      function* () {
        const t = B.spawn(function* () {
          s = L.syscall();
          yield* L.suspend(s);
        });
        yield* B.yieldNow();
        yield* B.cancel(t);
        events.ready.push(s!);
        const next = L.syscall();
        events.ready.push(next);
        yield* L.suspend(next);
        expect(t.status).toBe("cancelled");
        expect((yield* B.awaitTask(t)).ok).toBe(false);
      },
      { events: () => events },
    );
  });

  it("a point signalled before its task suspends does not suspend, and stays signalled, as Miou's", async () => {
    const events = new ManualEvents();
    await L.runKernel(
      function* () {
        const s = L.syscall();
        events.ready.push(s);
        const other = L.syscall();
        events.ready.push(other);
        yield* L.suspend(other); // select delivers both
        yield* L.suspend(s); // already signalled: returns at once
        yield* L.suspend(s); // still signalled
      },
      { events: () => events },
    );
    expect(events.selects.length).toBe(1);
  });

  it("a signalled point stays signalled: suspending on it again returns at once, as Miou's (after a wake)", async () => {
    const events = new ManualEvents();
    let point: L.Syscall | null = null;
    events.onBlock = () => events.ready.push(point!);
    await L.runKernel(
      function* () {
        point = L.syscall();
        yield* L.suspend(point); // woken by the blocking select
        yield* L.suspend(point); // signalled already
        yield* L.suspend(point);
      },
      { events: () => events },
    );
    expect(events.selects.filter((s) => s.block).length).toBe(1);
  });

  it("suspending without events is NoSelectProvided", async () => {
    const error = errorOf(
      await settle(function* () {
        yield* L.suspend(L.syscall());
      }),
    );
    expect(error).toBeInstanceOf(B.NoSelectProvided);
  });

  it("suspending on another task's syscall is a TypeError", async () => {
    const events = new ManualEvents();
    const error = errorOf(
      await settle(
        function* () {
          const mine = L.syscall();
          const t = B.spawn(function* () {
            yield* L.suspend(mine);
          });
          yield* B.awaitExn(t);
        },
        { events: () => events },
      ),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toMatch(/only the task that created/);
  });

  it("a Promise-returning select sends the scheduler back to Node's loop; interrupt settles it early", async () => {
    const events = new PromiseEvents();
    let point: L.Syscall | null = null;
    const value = await L.runKernel(
      function* () {
        const waker = B.spawn(function* () {
          yield* B.promise(() => new Promise((r) => setTimeout(r, 5)));
          // Only now is the select answered: however late the timer fired, it did while the select was pending.
          setTimeout(() => events.release([L.signal(point!)]), 15);
          return "timer fired while select was pending";
        });
        point = L.syscall();
        yield* L.suspend(point);
        return yield* B.awaitExn(waker);
      },
      { events: () => events },
    );
    expect(value).toMatch(/timer fired/);
    expect(events.interrupts).toBeGreaterThanOrEqual(1);
  });

  it("a blocking select that answers at once with nothing ready lets Node's loop run before it is asked again", async () => {
    // A backend that never blocks: readiness comes from a Node timer, so the
    // scheduler must give Node's loop a turn between two empty answers.
    let ready: L.Syscall | null = null;
    let emptyAnswers = 0;
    const events: L.Events = {
      select(block) {
        if (ready !== null) {
          const point = ready;
          ready = null;
          return [L.signal(point)];
        }
        if (block && ++emptyAnswers > 100_000) throw new Error("select was asked again and again without Node's loop running");
        return [];
      },
      interrupt() {},
      finaliser() {},
    };
    const value = await L.runKernel(
      function* () {
        const point = L.syscall();
        yield* L.suspend(point, () => setTimeout(() => (ready = point), 5));
        return "woken";
      },
      { events: () => events },
    );
    expect(value).toBe("woken");
  });

  it("validates its arguments", () => {
    expect(() => L.signal({} as L.Syscall)).toThrow(TypeError);
    expect(() => L.uid(null as unknown as L.Syscall)).toThrow(TypeError);
    expect(() => L.syscall()).toThrow(/inside a task/);
  });
});

describe("a Promise-returning select that wakes a task itself", () => {
  it("runs that task at once and interrupts the pending select", async () => {
    const events = new PromiseEvents(true);
    let sleeper: B.Task | null = null;
    events.onSelect = (block) => {
      if (block && sleeper !== null) {
        L.interrupt(sleeper, new RangeError("deadline"));
        sleeper = null;
      }
    };
    const value = await L.runKernel(
      function* () {
        const t = B.spawn(function* () {
          try {
            yield* new L.Trigger().wait();
          } catch (e) {
            return (e as Error).message;
          }
          return "not interrupted";
        });
        sleeper = t;
        // A task parked on a syscall, so that the domain calls select(true).
        const io = B.spawn(function* () {
          yield* L.suspend(L.syscall());
        });
        const message = yield* B.awaitExn(t);
        yield* B.cancel(io);
        return message;
      },
      { events: () => events },
    );
    expect(value).toBe("deadline");
    expect(events.interrupts).toBeGreaterThanOrEqual(1);
  });
});
