// HeldTasks: an orphans collector's tasks, in spawn order, found by uid, with the slots of those gone compacted.
import { describe, expect, it } from "vitest";
import { InternalError } from "../src/errors.js";
import { HeldTasks } from "../src/held-tasks.js";

const task = (uid: number) => ({ uid });

describe("HeldTasks", () => {
  it("finds what it holds by uid, whichever leaves, and hands out the oldest", () => {
    const held = new HeldTasks<{ uid: number }>();
    const tasks = [2, 3, 5, 8, 13].map(task);
    for (const t of tasks) held.add(t);
    expect(held.delete(tasks[2]!)).toBe(true);
    expect(held.delete(tasks[2]!), "already gone").toBe(false);
    expect(held.has(task(8)), "another object with the same uid is not held").toBe(false);
    expect(tasks.map((t) => held.has(t))).toEqual([true, true, false, true, true]);
    held.delete(tasks[0]!);
    expect(held.first()).toBe(tasks[1]);
    held.delete(tasks[1]!);
    expect([held.first(), held.size]).toEqual([tasks[3], 2]);
    held.delete(tasks[4]!);
    held.delete(tasks[3]!);
    expect([held.first(), held.size]).toEqual([undefined, 0]);
    held.add(task(21));
    expect(held.first()?.uid, "empty, it starts over").toBe(21);
  });

  it("keeps finding its tasks after the slots of those gone are compacted", () => {
    const held = new HeldTasks<{ uid: number }>();
    const tasks = Array.from({ length: 200 }, (_, i) => task(i * 2 + 1));
    for (const t of tasks) held.add(t);
    const kept = tasks.filter((_, i) => i % 7 === 3);
    for (const t of tasks) if (!kept.includes(t)) held.delete(t);
    expect(held.size).toBe(kept.length);
    expect(tasks.filter((t) => held.has(t))).toEqual(kept);
    expect(held.first()).toBe(kept[0]);
  });

  it("refuses a task added out of uid order (its searches would miss)", () => {
    const held = new HeldTasks<{ uid: number }>();
    held.add(task(5));
    expect(() => held.add(task(4))).toThrow(InternalError);
  });
});
