import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { Channel } from "../src/index.js";

setFlagsFromString("--allow-natives-syntax");
setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;
// V8's own test hooks: `%` calls parse only with --allow-natives-syntax, set above.
const natives = new Function(
  "f",
  "what",
  `switch (what) {
    case "prepare": return %PrepareFunctionForOptimization(f);
    case "optimize": return %OptimizeFunctionOnNextCall(f);
    case "status": return %GetOptimizationStatus(f);
  }`,
) as (f: (...args: never[]) => unknown, what: "prepare" | "optimize" | "status") => number;
const TURBOFANNED = 1 << 6;

describe("Channel: optimised code survives a full collection", () => {
  it("code compiled against channels stays optimised after every channel has died and a full GC ran", () => {
    function roundTrip(ch: Channel<number>, v: number): unknown {
      ch.trySend(v);
      return ch.tryRecv();
    }
    const warm = (): void => {
      let ch: Channel<number> | null = new Channel<number>(4);
      for (let i = 0; i < 100; i++) roundTrip(ch, i);
      ch = null;
    };
    // Channels enough for V8 to settle their maps (in-object slack tracking ends after a few).
    for (let i = 0; i < 10; i++) warm();
    natives(roundTrip, "prepare");
    warm();
    natives(roundTrip, "optimize");
    warm();
    expect(natives(roundTrip, "status") & TURBOFANNED).toBe(TURBOFANNED);
    // No channel the test made is alive: what keeps their maps is the package's.
    collect();
    collect();
    expect(natives(roundTrip, "status") & TURBOFANNED).toBe(TURBOFANNED);
  });
});
