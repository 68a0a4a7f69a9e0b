// Parked: the operation base of every backend. What a backend author relies
// on: attempt in the task's fiber, wait/ready, leave when the task goes,
// one object reused call after call (claim, busy), and withTimeout.
import * as B from "@bobbin/core";
import { failure } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Parked, WaitQueue } from "../../src/backend/index.js";
import { run, sleep, Timeout, withTimeout } from "../../src/index.js";

/** An operation that completes once its gate is open, and logs every call the base makes. */
class GateOp extends Parked<string> {
  readonly log: string[] = [];
  constructor(
    private readonly gate: { open: boolean; waiters: WaitQueue; readyInWait?: boolean },
    private readonly name = "gate",
  ) {
    super(name);
  }
  protected attempt(): boolean {
    this.log.push("attempt");
    if (!this.gate.open) return false;
    this.value = this.name;
    return true;
  }
  protected wait(): void {
    this.log.push("wait");
    this.gate.waiters.add(this);
    if (this.gate.readyInWait) {
      this.gate.open = true;
      this.gate.waiters.wakeFirst();
    }
  }
  protected leave(): void {
    this.log.push("leave");
    this.gate.waiters.leave(this);
  }
  protected override finished(): void {
    this.log.push("finished");
  }
  /** Hands the operation out for one call, as a socket that keeps it does. */
  use(): this {
    return this.claim();
  }
}

describe("Parked", () => {
  it("completes in the task without parking when attempt succeeds; finished runs once", async () => {
    const op = new GateOp({ open: true, waiters: new WaitQueue() });
    expect(
      await run(function* () {
        return yield* op;
      }),
    ).toBe("gate");
    expect(op.log, "no wait, no leave: it never parked").toEqual(["attempt", "finished"]);
  });

  it("parks until ready(), then attempts again in the task", async () => {
    const gate = { open: false, waiters: new WaitQueue() };
    const op = new GateOp(gate);
    const value = await run(function* () {
      const t = B.spawn(function* () {
        return yield* op;
      });
      yield* sleep(0.01);
      expect(gate.waiters.length, "parked in the queue it joined in wait()").toBe(1);
      gate.open = true;
      gate.waiters.wakeFirst();
      return yield* B.awaitExn(t);
    });
    expect(value).toBe("gate");
    expect(op.log).toEqual(["attempt", "wait", "attempt", "finished"]);
  });

  it("a ready() during wait() makes it attempt again at once: readiness that comes early is not lost", async () => {
    const op = new GateOp({ open: false, waiters: new WaitQueue(), readyInWait: true });
    expect(
      await run(function* () {
        return yield* op;
      }),
    ).toBe("gate");
    expect(op.log).toEqual(["attempt", "wait", "attempt", "finished"]);
  });

  it("a task cancelled while parked: leave() at that moment, the operation idle again, a later ready() ignored", async () => {
    const gate = { open: false, waiters: new WaitQueue() };
    const op = new GateOp(gate).use();
    await run(function* () {
      const t = B.spawn(function* () {
        return yield* op;
      });
      yield* sleep(0.01);
      expect(op.busy, "parked: busy").toBe(true);
      yield* B.cancel(t);
      expect(op.log, "leave() ran when the task left, not later").toEqual(["attempt", "wait", "leave"]);
      expect(gate.waiters.length, "it left the queue").toBe(0);
      expect(op.busy, "left: the socket may hand it out again").toBe(false);
      op.ready(); // a stray readiness after it left: nothing happens
    });
    expect(op.log).toEqual(["attempt", "wait", "leave"]);
  });

  it("claim() marks it busy until it is over; a second task running it while it is parked gets a TypeError", async () => {
    const gate = { open: false, waiters: new WaitQueue() };
    const op = new GateOp(gate);
    expect(op.busy).toBe(false);
    op.use();
    expect(op.busy, "claimed, not started").toBe(true);
    await run(function* () {
      const first = B.spawn(function* () {
        return yield* op;
      });
      yield* sleep(0.01);
      const second = yield* failure<B.Instruction, TypeError>(() => op);
      expect(second, "one object, one call at a time").toBeInstanceOf(TypeError);
      expect(second.message).toMatch(/already in progress in another task; make a new one for each use/);
      gate.open = true;
      gate.waiters.wakeFirst();
      expect(yield* B.awaitExn(first)).toBe("gate");
    });
    expect(op.busy, "completed: idle").toBe(false);
  });

  it("in an expired withTimeout scope it fails with Timeout before attempting, and finished runs", async () => {
    const op = new GateOp({ open: true, waiters: new WaitQueue() });
    const error = await run(function* () {
      return yield* failure(() =>
        withTimeout(0.01, {
          *[Symbol.iterator]() {
            try {
              yield* sleep(0.05);
            } catch {
              // the deadline passed: what follows in this scope fails at once
            }
            return yield* op;
          },
        }),
      );
    });
    expect(error).toBeInstanceOf(Timeout);
    expect(op.log, "no attempt in an expired scope").toEqual(["finished"]);
  });
});
