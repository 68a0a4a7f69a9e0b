/** Time moves only once Node's own queues are empty: what they deliver happens at the instant it was queued. */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { run, sleep } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { Sim, simulated } from "../src/index.js";

/** Runs `wait` in a world where another task sleeps 10 s: returns the virtual time (ms) at which `wait` returned. */
function* whileAnotherSleeps(wait: () => B.Operation<unknown>): Generator<B.Instruction, number, unknown> {
  const sleeper = B.spawn(function* () {
    yield* sleep(10);
  });
  yield* wait();
  const at = performance.now();
  yield* B.cancel(sleeper);
  return at;
}

describe("Node's queues before time", () => {
  it("a task woken from process.nextTick (twice deferred) is woken at this instant, not after the next deadline", async () => {
    const at = await run(
      () =>
        whileAnotherSleeps(() => {
          const woken = new L.Trigger();
          process.nextTick(() => process.nextTick(() => woken.signal()));
          return woken.wait();
        }),
      { backend: simulated() },
    );
    expect(at).toBe(0);
  });

  it("a task waiting on a Promise that settles in a chain of reactions is woken at this instant", async () => {
    const at = await run(
      () =>
        whileAnotherSleeps(() =>
          B.promise(() =>
            Promise.resolve(1)
              .then((n) => Promise.resolve(n + 1))
              .then((n) => n * 2),
          ),
        ),
      { backend: simulated() },
    );
    expect(at).toBe(0);
  });

  it("holds in a world of hosts too", async () => {
    const sim = new Sim({ seed: 3 });
    sim.client("client", () =>
      whileAnotherSleeps(() => {
        const woken = new L.Trigger();
        process.nextTick(() => queueMicrotask(() => process.nextTick(() => woken.signal())));
        return woken.wait();
      }),
    );
    expect(await sim.run()).toEqual([0]);
  });
});
