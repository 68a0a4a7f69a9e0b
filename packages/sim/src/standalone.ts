/**
 * The simulated backend on its own: `run(main, { backend: simulated() })`
 * from `@bobbin/unix` runs one program on one simulated host — virtual
 * time, a loopback network, deterministic clocks and randomness — without
 * declaring a world. (It is how the backend conformance suite runs it.)
 */
import { checkOptionNames } from "@bobbin/core/lowlevel";
import type { Backend } from "@bobbin/unix";
import { SimBackend } from "./backend.js";
import { Drawn } from "./choices.js";
import { Host } from "./host.js";
import { WorldRandom } from "./random.js";
import { World } from "./world.js";

/**
 * Options of {@link simulated}.
 *
 * @example
 * ```ts
 * await run(main, { backend: simulated({ seed: 7 }) });
 * ```
 */
export interface SimulatedOptions {
  /** Seeds the world's generator (`Math.random` inside the run, latencies). Default 0. */
  readonly seed?: number | undefined;
}

/**
 * A backend factory for `@bobbin/unix`'s `run`: each run gets a fresh world
 * with one host (10.0.0.1, named `local`), a virtual clock that jumps to the
 * next deadline whenever every task waits (`sleep(3600)` costs no real
 * time), and the globals patched for the run (see `Sim.run`). Serves dom0
 * only.
 *
 * @example
 * ```ts
 * import { run, sleep } from "@bobbin/unix";
 * await run(function* () { yield* sleep(3600); }, { backend: simulated() });   // instant
 * ```
 * @throws TypeError for invalid options; (from the factory) in a worker
 * domain, or while another simulation runs on this thread.
 */
export function simulated(options: SimulatedOptions = {}): (domain: number) => Backend {
  if (options === null || typeof options !== "object") throw new TypeError("simulated(options) expects an options object");
  checkOptionNames("simulated(options)", options, ["seed"]);
  const seed = options.seed ?? 0;
  if (!Number.isSafeInteger(seed)) throw new RangeError(`simulated({ seed }): the seed must be a safe integer, got ${String(seed)}`);
  return (domain) => {
    if (domain !== 0)
      throw new TypeError(
        "simulated(): the simulated backend serves dom0 only; for B.call and B.parallel, run with { simulateDomains: true } (worker domains simulated on this thread)",
      );
    const world = new World({ choices: new Drawn(new WorldRandom(seed), "fifo", 1, 1, null), trace: false, limit: Infinity, domains: 0 });
    const backend = new SimBackend(world);
    world.backend = backend;
    const host = new Host("local", 1, null, false);
    world.network.add(host);
    world.adoptAll(host);
    world.install();
    return backend;
  };
}
