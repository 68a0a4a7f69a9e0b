import * as B from "@bobbin/core";
import { run, sleep } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { simulated } from "../src/index.js";

const napThenSay = B.defineTask(import.meta.url, "napThenSay", function* (seconds: number) {
  yield* sleep(seconds);
  return `slept ${seconds}s on ${B.Domain.self()}`;
});

describe("simulated() on its own", () => {
  it("runs calls on simulated domains when the run asks for them, in virtual time", async () => {
    const started = performance.now();
    const said = await run(
      function* () {
        return yield* B.parallel(napThenSay, [3600, 7200]);
      },
      { backend: simulated({ seed: 1 }), domains: 2, simulateDomains: true },
    );
    expect(said.map((r) => (r.ok ? r.value : String(r.error)))).toEqual(["slept 3600s on 1", "slept 7200s on 2"]);
    expect(performance.now() - started).toBeLessThan(5_000); // two hours of sleep cost no real time
  });

  it("refuses to make a backend for a worker domain, and says which option keeps calls on this thread", () => {
    expect(() => simulated({ seed: 1 })(1)).toThrow(/serves dom0 only; for B.call and B.parallel, run with \{ simulateDomains: true \}/);
  });
});
