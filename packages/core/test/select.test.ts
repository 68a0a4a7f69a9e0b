/** select: the protocol (offer, enlist, claim at most once, withdraw) with a case written here. */
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { errorOf, settleOperation, yieldTimes } from "./support/helpers.js";

/**
 * A one-value slot: a select case that takes the value if there is one, and
 * otherwise waits for `put`. What the channels of @bobbin/sync do, in small.
 */
class Slot<T> {
  value: { v: T } | null = null;
  readonly takers = new Set<{ choice: L.Choice; index: number }>();
  enlisted = 0;
  withdrawn = 0;

  take(): L.SelectCase<T> {
    return new Take(this);
  }

  /** Hands `v` to the oldest waiting taker whose select is still open, or keeps it. */
  put(v: T): void {
    for (const taker of this.takers) {
      this.takers.delete(taker);
      if (taker.choice.claim(taker.index, v)) return;
    }
    this.value = { v };
  }
}

class Take<T> extends L.SelectCase<T, { choice: L.Choice; index: number }> {
  constructor(private readonly slot: Slot<T>) {
    super();
  }

  offer(choice: L.Choice, index: number): void {
    const held = this.slot.value;
    if (held !== null && choice.claim(index, held.v)) this.slot.value = null;
  }

  enlist(choice: L.Choice, index: number) {
    const taker = { choice, index };
    this.slot.takers.add(taker);
    this.slot.enlisted++;
    return taker;
  }

  withdraw(taker: { choice: L.Choice; index: number }): void {
    this.slot.withdrawn++;
    this.slot.takers.delete(taker);
  }
}

/** A case that happens at once with an error. */
class Broken extends L.SelectCase<never, null> {
  constructor(private readonly error: unknown) {
    super();
  }
  offer(choice: L.Choice, index: number): void {
    choice.fail(index, this.error);
  }
  enlist(): null {
    return null;
  }
  withdraw(): void {}
}

describe("select", () => {
  it("returns at once with the first case that can happen, asking no later case", async () => {
    const a = new Slot<number>();
    const b = new Slot<string>();
    a.value = { v: 1 };
    b.value = { v: "b" };
    const r = await settleOperation(B.select([b.take(), a.take()]));
    expect(r).toEqual({ ok: true, value: { index: 0, value: "b" } });
    expect(a.value).toEqual({ v: 1 });
    expect(a.enlisted + b.enlisted).toBe(0);
  });

  it("waits on every case; exactly one happens, and the others are withdrawn", async () => {
    const a = new Slot<number>();
    const b = new Slot<string>();
    await B.run(function* () {
      const chooser = B.spawn(function* () {
        return yield* B.select([a.take(), b.take()]);
      });
      yield* yieldTimes(2);
      expect(a.takers.size + b.takers.size).toBe(2);
      b.put("b");
      a.put(2); // the chooser's select is decided: the value stays in its slot
      expect(yield* B.awaitExn(chooser)).toEqual({ index: 1, value: "b" });
      expect(a.value).toEqual({ v: 2 });
      expect(a.takers.size + b.takers.size).toBe(0);
      expect([a.withdrawn, b.withdrawn]).toEqual([1, 1]);
    });
  });

  it("a cancelled select withdraws every case and took nothing", async () => {
    const a = new Slot<number>();
    await B.run(function* () {
      const chooser = B.spawn(function* () {
        return yield* B.select([a.take(), B.timeout(60_000)]);
      });
      yield* yieldTimes(2);
      yield* B.cancel(chooser);
      expect(a.takers.size).toBe(0);
      a.put(1);
      expect(a.value).toEqual({ v: 1 });
    });
  });

  it("a select woken with a value keeps it when cancelled before it runs (Cancelled comes at its next wait)", async () => {
    const a = new Slot<number>();
    let got: number | undefined;
    await B.run(function* () {
      const chooser = B.spawn(function* () {
        got = (yield* B.select([a.take()])).value;
        yield* B.yieldNow();
        got = -1;
      });
      yield* yieldTimes(2);
      a.put(7);
      yield* B.cancel(chooser);
      expect(chooser.status).toBe("cancelled");
    });
    expect(got).toBe(7);
  });

  it("narrows the value by the index", async () => {
    const a = new Slot<number>();
    a.value = { v: 3 };
    const doubled = await B.run(function* () {
      const r = yield* B.select([a.take(), B.timeout(10)]);
      return r.index === 0 ? r.value * 2 : 0;
    });
    expect(doubled).toBe(6);
  });

  it("throws the error of a case that happened with one", async () => {
    const boom = new Error("closed");
    const r = await settleOperation(B.select([new Slot<number>().take(), new Broken(boom)]));
    expect(errorOf(r)).toBe(boom);
  });

  it("withdraws what it enlisted when a later case's enlist throws", async () => {
    const a = new Slot<number>();
    class Refuses extends L.SelectCase<void, null> {
      offer(): void {}
      enlist(): null {
        throw new Error("cannot wait");
      }
      withdraw(): void {}
    }
    const r = await settleOperation(B.select([a.take(), new Refuses()]));
    expect((errorOf(r) as Error).message).toBe("cannot wait");
    expect(a.takers.size).toBe(0);
  });

  it("a case is an operation on its own, and can be used again", async () => {
    const a = new Slot<number>();
    const take = a.take();
    await B.run(function* () {
      a.value = { v: 1 };
      expect(yield* take).toBe(1);
      const t = B.spawn(function* () {
        return yield* take;
      });
      yield* B.yieldNow();
      a.put(2);
      expect(yield* B.awaitExn(t)).toBe(2);
    });
  });

  it("a choice is claimed at most once, and names a bad index", async () => {
    let kept: L.Choice | null = null;
    class Keeps extends L.SelectCase<number, null> {
      offer(choice: L.Choice, index: number): void {
        kept = choice;
        expect(() => choice.claim(index + 1, 0)).toThrow(RangeError);
        expect(choice.isOpen).toBe(true);
        expect(choice.claim(index, 5)).toBe(true);
        expect(choice.isOpen).toBe(false);
        expect(choice.claim(index, 6)).toBe(false);
        expect(choice.fail(index, new Error("late"))).toBe(false);
      }
      enlist(): null {
        return null;
      }
      withdraw(): void {}
    }
    expect(await settleOperation(new Keeps())).toEqual({ ok: true, value: 5 });
    expect(kept!.isOpen).toBe(false);
  });

  it("refuses what is not a list of cases", async () => {
    expect(errorOf(await settleOperation(B.select([])))).toBeInstanceOf(RangeError);
    expect(errorOf(await settleOperation(B.select("x" as never)))).toBeInstanceOf(TypeError);
    const notACase = errorOf(await settleOperation(B.select([B.yieldNow()] as never)));
    expect(notACase).toBeInstanceOf(TypeError);
    expect((notACase as Error).message).toMatch(/B\.race/);
    // Outside a task:
    expect(() =>
      B.select([B.timeout(1)])
        [Symbol.iterator]()
        .next(),
    ).toThrow(TypeError);
  });
});
