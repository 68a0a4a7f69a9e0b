/** Suspension points and the events contract. */
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { errorOf, ManualEvents, PromiseEvents, settle } from "./support/helpers.js";

describe("events", () => {
  it("select gets block = true when only suspended tasks remain, and wakes the task it signals", async () => {
    const events = new ManualEvents();
    let point: B.Syscall | null = null;
    events.onBlock = () => events.ready.push(point!);
    const value = await B.run(
      function* () {
        point = B.syscall("test");
        yield* B.suspend(point);
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
    let point: B.Syscall | null = null;
    events.onBlock = () => events.ready.push(point!);
    await B.run(
      function* () {
        const busy = B.spawn(function* () {
          for (let i = 0; i < 100; i++) yield* B.yieldNow();
        });
        point = B.syscall();
        yield* B.suspend(point);
        yield* B.awaitExn(busy);
      },
      { events: () => events, pollEvery: 10 },
    );
    expect(events.selects.filter((s) => !s.block).length).toBeGreaterThanOrEqual(5);
  });

  it("runs the register callback once the task is parked", async () => {
    const events = new ManualEvents();
    const registered: number[] = [];
    await B.run(
      function* () {
        const s = B.syscall();
        yield* B.suspend(s, (p) => {
          registered.push(B.uid(p));
          events.ready.push(p);
        });
        expect(registered).toEqual([B.uid(s)]);
      },
      { events: () => events },
    );
  });

  it("reports a cancelled syscall's uid exactly once", async () => {
    const events = new ManualEvents();
    let uid = -1;
    await B.run(
      function* () {
        const t = B.spawn(function* () {
          const s = B.syscall();
          uid = B.uid(s);
          yield* B.suspend(s);
        });
        yield* B.yieldNow();
        yield* B.cancel(t);
        // keep the domain busy with another syscall so select runs again
        const s2 = B.syscall();
        events.ready.push(s2);
        yield* B.suspend(s2);
        const s3 = B.syscall();
        events.ready.push(s3);
        yield* B.suspend(s3);
      },
      { events: () => events },
    );
    const reports = events.selects.flatMap((s) => s.cancelled);
    expect(reports).toEqual([uid]);
  });

  it("a signal for a cancelled syscall is ignored", async () => {
    const events = new ManualEvents();
    let s: B.Syscall | null = null;
    await B.run(
      function* () {
        const t = B.spawn(function* () {
          s = B.syscall();
          yield* B.suspend(s);
        });
        yield* B.yieldNow();
        yield* B.cancel(t);
        events.ready.push(s!);
        const next = B.syscall();
        events.ready.push(next);
        yield* B.suspend(next);
        expect(t.status).toBe("cancelled");
        expect((yield* B.awaitTask(t)).ok).toBe(false);
      },
      { events: () => events },
    );
  });

  it("a point signalled before its task suspends does not suspend, and stays signalled, as Miou's", async () => {
    const events = new ManualEvents();
    await B.run(
      function* () {
        const s = B.syscall();
        events.ready.push(s);
        const other = B.syscall();
        events.ready.push(other);
        yield* B.suspend(other); // select delivers both
        yield* B.suspend(s); // already signalled: returns at once
        yield* B.suspend(s); // still signalled
      },
      { events: () => events },
    );
    expect(events.selects.length).toBe(1);
  });

  it("a signalled point stays signalled: suspending on it again returns at once, as Miou's (after a wake)", async () => {
    const events = new ManualEvents();
    let point: B.Syscall | null = null;
    events.onBlock = () => events.ready.push(point!);
    await B.run(
      function* () {
        point = B.syscall();
        yield* B.suspend(point); // woken by the blocking select
        yield* B.suspend(point); // signalled already
        yield* B.suspend(point);
      },
      { events: () => events },
    );
    expect(events.selects.filter((s) => s.block).length).toBe(1);
  });

  it("suspending without events is NoSelectProvided", async () => {
    const error = errorOf(
      await settle(function* () {
        yield* B.suspend(B.syscall());
      }),
    );
    expect(error).toBeInstanceOf(B.NoSelectProvided);
  });

  it("suspending on another task's syscall is a TypeError", async () => {
    const events = new ManualEvents();
    const error = errorOf(
      await settle(
        function* () {
          const mine = B.syscall();
          const t = B.spawn(function* () {
            yield* B.suspend(mine);
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
    let point: B.Syscall | null = null;
    const value = await B.run(
      function* () {
        const waker = B.spawn(function* () {
          yield* B.promise(() => new Promise((r) => setTimeout(r, 5)));
          // Only now is the select answered: however late the timer fired, it did while the select was pending.
          setTimeout(() => events.release([B.signal(point!)]), 15);
          return "timer fired while select was pending";
        });
        point = B.syscall();
        yield* B.suspend(point);
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
    let ready: B.Syscall | null = null;
    let emptyAnswers = 0;
    const events: B.Events = {
      select(block) {
        if (ready !== null) {
          const point = ready;
          ready = null;
          return [B.signal(point)];
        }
        if (block && ++emptyAnswers > 100_000) throw new Error("select was asked again and again without Node's loop running");
        return [];
      },
      interrupt() {},
      finaliser() {},
    };
    const value = await B.run(
      function* () {
        const point = B.syscall();
        yield* B.suspend(point, () => setTimeout(() => (ready = point), 5));
        return "woken";
      },
      { events: () => events },
    );
    expect(value).toBe("woken");
  });

  it("validates its arguments", () => {
    expect(() => B.signal({} as B.Syscall)).toThrow(TypeError);
    expect(() => B.uid(null as unknown as B.Syscall)).toThrow(TypeError);
    expect(() => B.syscall()).toThrow(/inside a task/);
  });
});

describe("a Promise-returning select that wakes a task itself", () => {
  it("runs that task at once and interrupts the pending select", async () => {
    const events = new PromiseEvents(true);
    let sleeper: B.Task | null = null;
    events.onSelect = (block) => {
      if (block && sleeper !== null) {
        B.interrupt(sleeper, new RangeError("deadline"));
        sleeper = null;
      }
    };
    const value = await B.run(
      function* () {
        const t = B.spawn(function* () {
          try {
            yield* new B.Trigger().wait();
          } catch (e) {
            return (e as Error).message;
          }
          return "not interrupted";
        });
        sleeper = t;
        // A task parked on a syscall, so that the domain calls select(true).
        const io = B.spawn(function* () {
          yield* B.suspend(B.syscall());
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
