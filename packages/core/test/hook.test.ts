import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { errorOf, settle, yieldTimes } from "./support/helpers.js";

describe("Hook", () => {
  it("runs a hook before every step until removed", async () => {
    let ticks = 0;
    await B.run(function* () {
      const key = L.Hook.add(() => ticks++);
      yield* yieldTimes(10);
      L.Hook.remove(key);
      const seen = ticks;
      yield* yieldTimes(10);
      expect(ticks).toBe(seen);
      L.Hook.remove(key); // twice is fine
    });
    expect(ticks).toBeGreaterThanOrEqual(10);
  });

  it("a hook that throws is removed and fails the run, naming the hook", async () => {
    let calls = 0;
    const error = errorOf(
      await settle(function* () {
        L.Hook.add(function countTicks() {
          calls++;
          throw new Error("bad hook");
        });
        yield* yieldTimes(5);
      }),
    );
    expect(calls).toBe(1);
    expect(error).toBeInstanceOf(B.CallbackFailed);
    expect((error as B.CallbackFailed).source).toMatch(/tick hook countTicks/);
    expect((error as Error).message).toMatch(/bad hook/);
    expect((error as B.CallbackFailed).cause).toBeInstanceOf(Error);
  });

  it("validates its arguments", async () => {
    expect(() => L.Hook.add(() => {})).toThrow(/inside a task/);
    await B.run(function* () {
      expect(() => L.Hook.add(1 as unknown as () => void)).toThrow(TypeError);
      expect(() => L.Hook.remove({} as L.HookKey)).toThrow(TypeError);
    });
  });
});
