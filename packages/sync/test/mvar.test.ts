import * as B from "@bobbin/core";
import { errorOf } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { MVar } from "../src/index.js";
import { forever, pause } from "./helpers.js";

describe("MVar: take, put, read", () => {
  it("take empties a full box; put fills an empty one; neither suspends when it need not", async () => {
    const box = MVar.of(1);
    await B.run(function* () {
      let otherRan = false;
      const other = B.spawn(function* () {
        otherRan = true;
      });
      expect(yield* box.take()).toBe(1);
      expect(box.isEmpty).toBe(true);
      yield* box.put(2);
      expect(box.isEmpty).toBe(false);
      expect(yield* box.read()).toBe(2);
      expect(box.isEmpty).toBe(false);
      expect(otherRan).toBe(false);
      yield* B.awaitExn(other);
    });
  });

  it("take waits while empty, put waits while full", async () => {
    const box = MVar.empty<string>();
    await B.run(function* () {
      const taker = B.spawn(function* () {
        return yield* box.take();
      });
      yield* pause(2);
      expect(box.waiters.takers).toBe(1);
      yield* box.put("a"); // handed straight to the taker: the box stays empty
      expect(box.isEmpty).toBe(true);
      expect(yield* B.awaitExn(taker)).toBe("a");

      yield* box.put("b");
      const putter = B.spawn(function* () {
        yield* box.put("c");
        return "put";
      });
      yield* pause(2);
      expect(box.waiters.putters).toBe(1);
      expect(yield* box.take()).toBe("b");
      // The waiting putter refilled the box at once.
      expect(box.isEmpty).toBe(false);
      expect(yield* B.awaitExn(putter)).toBe("put");
      expect(yield* box.take()).toBe("c");
    });
  });

  it("serves takers and putters in FIFO order", async () => {
    const box = new MVar<number>();
    const got: string[] = [];
    await B.run(function* () {
      const takers = ["t0", "t1", "t2"].map((name) =>
        B.spawn(function* () {
          got.push(`${name}=${yield* box.take()}`);
        }),
      );
      yield* pause(2);
      const putters = [10, 11, 12].map((v) =>
        B.spawn(function* () {
          yield* box.put(v);
        }),
      );
      yield* B.awaitAll([...takers, ...putters]);
    });
    expect(got).toEqual(["t0=10", "t1=11", "t2=12"]);
  });

  it("a put wakes every reader with the value, then the oldest taker", async () => {
    const box = new MVar<string>();
    await B.run(function* () {
      const r1 = B.spawn(function* () {
        return yield* box.read();
      });
      const t1 = B.spawn(function* () {
        return yield* box.take();
      });
      const r2 = B.spawn(function* () {
        return yield* box.read();
      });
      yield* pause(2);
      expect(box.waiters).toEqual({ takers: 1, readers: 2, putters: 0 });
      yield* box.put("v");
      expect(box.isEmpty).toBe(true); // the taker got it
      expect(yield* B.awaitExn(r1)).toBe("v");
      expect(yield* B.awaitExn(r2)).toBe("v");
      expect(yield* B.awaitExn(t1)).toBe("v");
    });
  });

  it("tryTake, tryPut and tryRead never wait, and tell an MVar of undefined from an empty one", async () => {
    const box = new MVar<undefined>();
    await B.run(function* () {
      expect(box.tryTake()).toBeUndefined();
      expect(box.tryRead()).toBeUndefined();
      expect(box.tryPut(undefined)).toBe(true);
      expect(box.tryPut(undefined)).toBe(false);
      expect(box.tryRead()).toEqual({ value: undefined });
      expect(box.tryTake()).toEqual({ value: undefined });
      expect(box.isEmpty).toBe(true);
    });
  });

  it("tryPut from a plain callback wakes a taker", async () => {
    const box = new MVar<number>();
    await B.run(function* () {
      const t = B.spawn(function* () {
        return yield* box.take();
      });
      setTimeout(() => box.tryPut(7), 5);
      expect(yield* B.awaitExn(t)).toBe(7);
    });
  });

  it("passes 1,000 values between a producer and a consumer in order", async () => {
    const box = new MVar<number>();
    const seen: number[] = [];
    await B.run(function* () {
      const consumer = B.spawn(function* () {
        for (let i = 0; i < 1000; i++) seen.push(yield* box.take());
      });
      for (let i = 0; i < 1000; i++) yield* box.put(i);
      yield* B.awaitExn(consumer);
    });
    expect(seen).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  it("take, put and read outside a task are TypeErrors", () => {
    const box = MVar.of(1);
    expect(() => box.take()[Symbol.iterator]()).toThrow(TypeError);
    expect(() => box.put(1)[Symbol.iterator]()).toThrow(TypeError);
    expect(() => box.read()[Symbol.iterator]()).toThrow(TypeError);
  });
});

describe("MVar: cancellation", () => {
  it("a cancelled taker leaves the queue; the value goes to the next taker", async () => {
    const box = new MVar<number>();
    await B.run(function* () {
      const a = B.spawn(function* () {
        return yield* box.take();
      });
      const b = B.spawn(function* () {
        return yield* box.take();
      });
      yield* pause(2);
      yield* B.cancel(a);
      expect(box.waiters.takers).toBe(1);
      expect(errorOf(yield* B.awaitTask(a))).toBeInstanceOf(B.Cancelled);
      yield* box.put(5);
      expect(yield* B.awaitExn(b)).toBe(5);
      expect(box.isEmpty).toBe(true);
    });
  });

  it("a cancelled putter leaves the queue without putting", async () => {
    const box = MVar.of(1);
    await B.run(function* () {
      const p = B.spawn(function* () {
        yield* box.put(2);
      });
      yield* pause(2);
      expect(box.waiters.putters).toBe(1);
      yield* B.cancel(p);
      expect(box.waiters.putters).toBe(0);
      expect(yield* box.take()).toBe(1);
      expect(box.isEmpty).toBe(true); // 2 was never put
    });
  });

  it("a cancelled reader leaves the queue", async () => {
    const box = new MVar<number>();
    await B.run(function* () {
      const r = B.spawn(function* () {
        return yield* box.read();
      });
      yield* pause(2);
      yield* B.cancel(r);
      expect(box.waiters.readers).toBe(0);
      yield* box.put(1);
      expect(box.tryRead()).toEqual({ value: 1 });
    });
  });

  it("a value handed to a taker cancelled and detached in the same step goes to the next taker", async () => {
    const box = new MVar<string>();
    await B.run(function* () {
      const t1 = B.spawn(function* () {
        return yield* box.take();
      });
      const t2 = B.spawn(function* () {
        return yield* box.take();
      });
      const x = B.spawn(function* () {
        yield* B.protect({ onCancellation: () => box.tryPut("v") }, forever);
      });
      const winner = B.spawn(function* () {
        return "winner";
      });
      yield* pause(3);
      yield* B.awaitFirst<unknown>([winner, t1, x]);
      expect(yield* B.awaitExn(t2)).toBe("v");
      expect(t1.status).toBe("cancelled");
      expect(box.isEmpty).toBe(true);
      expect(box.waiters).toEqual({ takers: 0, readers: 0, putters: 0 });
    });
  });

  it("a putter cancelled and detached in the same step does not refill the box", async () => {
    const box = MVar.of("first");
    await B.run(function* () {
      const p1 = B.spawn(function* () {
        yield* box.put("cancelled");
      });
      const p2 = B.spawn(function* () {
        yield* box.put("second");
      });
      let took: string | undefined;
      const x = B.spawn(function* () {
        yield* B.protect({ onCancellation: () => (took = box.tryTake()?.value) }, forever);
      });
      const winner = B.spawn(function* () {
        return "winner";
      });
      yield* pause(3);
      expect(box.waiters.putters).toBe(2);
      yield* B.awaitFirst<unknown>([winner, p1, x]);
      expect(took).toBe("first");
      yield* B.awaitExn(p2);
      expect(yield* box.take()).toBe("second");
      expect(box.isEmpty).toBe(true);
      expect(p1.status).toBe("cancelled");
    });
  });
});
