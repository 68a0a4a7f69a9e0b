import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";

describe("TaskLocal", () => {
  it("holds one value per task, created on first read", async () => {
    const slot = new B.TaskLocal("id", (task) => task.uid * 10);
    await B.run(function* () {
      const me = B.self();
      expect(slot.has()).toBe(false);
      expect(slot.get()).toBe(me.uid * 10);
      slot.set(1);
      const child = B.spawn(function* () {
        expect(slot.get()).toBe(B.self().uid * 10);
        slot.set(2);
        return slot.get();
      });
      expect(yield* B.awaitExn(child)).toBe(2);
      expect(slot.get()).toBe(1);
      expect(slot.get(child)).toBe(2);
    });
  });

  it("needs a task or an init function", () => {
    const slot = new B.TaskLocal("x", () => 0);
    expect(() => slot.get()).toThrow(/inside a task/);
    expect(() => new B.TaskLocal("bad", 1 as unknown as () => number)).toThrow(TypeError);
    expect(() => slot.get({} as never)).toThrow(/x\.get\(…, task\) expects a task made by B.spawn or B.call, got an object/);
    expect(() => slot.set(1, "t" as never)).toThrow(TypeError);
  });
});
