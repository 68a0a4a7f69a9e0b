// WaitQueue and ParkedCount: where operations wait, in order, and a Node handle held only while some do.
import { describe, expect, it } from "vitest";
import { type Parked, ParkedCount, WaitQueue } from "../../src/backend/index.js";

/** A stand-in for a parked operation: it records that it was woken. */
function op(name: string, woken: string[]): Parked<unknown> {
  return { ready: () => woken.push(name) } as unknown as Parked<unknown>;
}

describe("WaitQueue", () => {
  it("wakes the operation that waits longest first; addFirst puts one back at the head", () => {
    const woken: string[] = [];
    const q = new WaitQueue();
    const [a, b, c] = [op("a", woken), op("b", woken), op("c", woken)];
    q.add(a);
    q.add(b);
    q.addFirst(c);
    expect(q.first).toBe(c);
    expect(q.wakeFirst()).toBe(true);
    expect(woken).toEqual(["c"]);
    q.wakeAll();
    expect(woken, "first in, first woken").toEqual(["c", "a", "b"]);
    expect(q.length).toBe(0);
    expect(q.wakeFirst(), "nobody to wake").toBe(false);
  });

  it("leave takes an operation out without waking it, and says whether it was there", () => {
    const woken: string[] = [];
    const q = new WaitQueue();
    const [a, b] = [op("a", woken), op("b", woken)];
    q.add(a);
    q.add(b);
    expect(q.leave(a)).toBe(true);
    expect(q.leave(a), "a second leave finds nothing").toBe(false);
    q.wakeAll();
    expect(woken).toEqual(["b"]);
  });

  it("take hands the first over unwoken; wakeWhere wakes the chosen and keeps the others in order", () => {
    const woken: string[] = [];
    const q = new WaitQueue();
    const ops = ["a", "b", "c", "d"].map((n) => op(n, woken));
    for (const o of ops) q.add(o);
    expect(q.take()).toBe(ops[0]);
    expect(woken).toEqual([]);
    q.wakeWhere((o) => o === ops[2]);
    expect(woken).toEqual(["c"]);
    expect([q.take(), q.take(), q.take()]).toEqual([ops[1], ops[3], undefined]);
  });
});

describe("ParkedCount", () => {
  it("refs its handle while any operation of its queues waits, and only then", () => {
    const calls: string[] = [];
    const count = new ParkedCount({ ref: () => calls.push("ref"), unref: () => calls.push("unref") });
    const readers = new WaitQueue(count);
    const writers = new WaitQueue(count);
    const woken: string[] = [];
    const [r, w] = [op("r", woken), op("w", woken)];
    readers.add(r);
    writers.add(w);
    expect(count.count).toBe(2);
    expect(calls, "one ref for the first, none for the second").toEqual(["ref"]);
    readers.wakeFirst();
    expect(calls).toEqual(["ref"]);
    writers.leave(w);
    expect(calls, "unref once the last left").toEqual(["ref", "unref"]);
    expect(count.count).toBe(0);
  });
});
