/**
 * Shared primitives on simulated domains (`run({ simulateDomains: true })`,
 * as in `@bobbin/sim`): they cross as portables and keep their guarantees
 * when every domain shares one thread, and the run replays from its seed.
 */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { describe, expect, it } from "vitest";
import { Mutex, Semaphore } from "../../dist/index.js";

/** What each holder did, in order: module state is shared only because the domains share a thread. */
const log: string[] = [];

const critical = B.defineTask(import.meta.url, "critical", function* (m: Mutex, name: string) {
  for (let i = 0; i < 3; i++) {
    yield* m.protect(function* () {
      log.push(`${name}+${B.Domain.self()}`);
      yield* B.yieldNow();
      log.push(`${name}-`);
    });
    yield* B.yieldNow();
  }
});

let inside = 0;
let most = 0;
const gated = B.defineTask(import.meta.url, "gated", function* (gate: Semaphore) {
  for (let i = 0; i < 3; i++) {
    yield* gate.acquire();
    inside++;
    most = Math.max(most, inside);
    yield* B.yieldNow();
    inside--;
    gate.release();
  }
});

function randomPolicy(seed: number): L.SchedulingPolicy {
  let state = seed >>> 0 || 1;
  return {
    pick(ready) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return (state >>> 16) % ready.length;
    },
  };
}

describe("shared primitives on simulated domains", () => {
  it("a shared Mutex excludes across domains, and the seed replays who held it when", async () => {
    const holders = async (seed: number) => {
      log.length = 0;
      await L.runKernel(
        function* () {
          const m = Mutex.shared();
          yield* B.awaitAll(["a", "b", "c"].map((name) => B.call(critical, m, name)));
        },
        { domains: 2, simulateDomains: true, seed, policy: randomPolicy(seed) },
      );
      return log.join(" ");
    };
    const first = await holders(9);
    const entries = first.split(" ");
    expect(entries).toHaveLength(18);
    for (let i = 0; i < entries.length; i += 2) expect(entries[i + 1]).toBe(`${entries[i]!.split("+")[0]}-`);
    expect(await holders(9)).toBe(first);
  });

  it("a shared Semaphore admits at most its count over every domain", async () => {
    inside = 0;
    most = 0;
    await L.runKernel(
      function* () {
        const gate = Semaphore.shared(2);
        yield* B.awaitAll([1, 2, 3, 4, 5].map(() => B.call(gated, gate)));
      },
      { domains: 3, simulateDomains: true, seed: 2, policy: randomPolicy(2) },
    );
    expect(most).toBe(2);
  });
});
