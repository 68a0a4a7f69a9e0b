import { describe, expect, it, vi } from "vitest";
import * as B from "../src/index.js";
import { yieldTimes } from "./support/helpers.js";

describe("Hook", () => {
  it("runs a hook before every step until removed", async () => {
    let ticks = 0;
    await B.run(function* () {
      const key = B.Hook.add(() => ticks++);
      yield* yieldTimes(10);
      B.Hook.remove(key);
      const seen = ticks;
      yield* yieldTimes(10);
      expect(ticks).toBe(seen);
      B.Hook.remove(key); // twice is fine
    });
    expect(ticks).toBeGreaterThanOrEqual(10);
  });

  it("removes a hook that throws, with a warning", async () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    let calls = 0;
    try {
      await B.run(function* () {
        B.Hook.add(() => {
          calls++;
          throw new Error("bad hook");
        });
        yield* yieldTimes(5);
      });
      expect(calls).toBe(1);
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/bad hook/), expect.objectContaining({ code: "BOBBIN_HOOK_REMOVED" }));
    } finally {
      warn.mockRestore();
    }
  });

  it("validates its arguments", async () => {
    expect(() => B.Hook.add(() => {})).toThrow(/inside a task/);
    await B.run(function* () {
      expect(() => B.Hook.add(1 as unknown as () => void)).toThrow(TypeError);
      expect(() => B.Hook.remove({} as B.HookKey)).toThrow(TypeError);
    });
  });
});
