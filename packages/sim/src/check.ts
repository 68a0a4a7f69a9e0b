/**
 * `check` and `replay`: search many runs of a world for a failure, and make
 * a failing run again from its one-line reproduction.
 */
import { CheckFailed } from "./errors.js";
import type { PolicyName } from "./policy.js";
import { runSeed } from "./random.js";
import { parseRepro } from "./repro.js";
import { DEFAULT_STEPS, Sim } from "./sim.js";

/**
 * Declares a world: hosts, clients, links (called once per run, with a fresh
 * `Sim`). It may be async.
 *
 * @example
 * ```ts
 * const build: Build = (sim) => {
 *   sim.host("server", server);
 *   sim.client("client", client);
 * };
 * ```
 */
export type Build = (sim: Sim) => void | Promise<void>;

/**
 * Options of {@link check}.
 *
 * @example
 * ```ts
 * await check(build, { runs: 500, seed: 1, policy: "pct", depth: 2 });
 * ```
 */
export interface CheckOptions {
  /** How many runs (default 100). */
  readonly runs?: number;
  /** The seed the runs' seeds come from (default: a random one, named in the failure). */
  readonly seed?: number;
  /** The schedule of every run (default `"random"`). */
  readonly policy?: PolicyName;
  /** PCT's bug depth (default 3). */
  readonly depth?: number;
  /** Each run's limit in virtual seconds (see `SimOptions.limit`). */
  readonly limit?: number;
  /** Each run's simulated worker domains (see `SimOptions.domains`). */
  readonly domains?: number;
}

/**
 * What {@link check} reports when every run passed.
 *
 * @example
 * ```ts
 * const { runs, seed } = await check(build, { runs: 50 });
 * ```
 */
export interface CheckReport {
  /** How many runs passed. */
  readonly runs: number;
  /** The seed the runs' seeds came from. */
  readonly seed: number;
}

/**
 * Runs `build`'s world `runs` times, each with its own seed drawn from
 * `seed`, and stops at the first failure: it rejects with `CheckFailed`,
 * whose message and `repro` give the line that replays that run
 * (`replay(build, error.repro)`), and whose `cause` is the run's error.
 * Under PCT, each run's step horizon is the longest run seen so far.
 *
 * @example
 * ```ts
 * await check((sim) => {
 *   sim.client("a", worker);
 *   sim.client("b", worker);
 * }, { runs: 200, policy: "pct" });
 * ```
 * @throws (rejects with) CheckFailed for the first failing run; what `build` throws.
 * @throws TypeError / RangeError for invalid options.
 */
export async function check(build: Build, options: CheckOptions = {}): Promise<CheckReport> {
  if (typeof build !== "function") throw new TypeError("check(build, options) expects build to be a function (sim) => { sim.host(…); … }");
  if (options === null || typeof options !== "object") throw new TypeError("check(build, options) expects an options object");
  const { runs = 100, seed = Math.floor(Math.random() * 2 ** 32), policy = "random", depth, limit, domains } = options;
  if (!Number.isInteger(runs) || runs < 1) throw new RangeError(`check({ runs }) must be an integer ≥ 1, got ${String(runs)}`);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`check({ seed }) must be a safe integer, got ${String(seed)}`);
  let steps = DEFAULT_STEPS;
  for (let i = 0; i < runs; i++) {
    const sim = new Sim({
      seed: runSeed(seed, i),
      policy,
      ...(depth !== undefined ? { depth } : {}),
      ...(policy === "pct" ? { steps } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(domains !== undefined ? { domains } : {}),
    });
    await build(sim);
    try {
      await sim.run();
    } catch (error) {
      throw new CheckFailed(sim.repro, i, runs, error);
    }
    steps = Math.max(steps, sim.stepsTaken);
  }
  return { runs, seed };
}

/**
 * Options of {@link replay}: what may differ from the run replayed without
 * changing it.
 *
 * @example
 * ```ts
 * await replay(build, repro, { trace: true });
 * ```
 */
export interface ReplayOptions {
  /** Keep a trace (`sim.trace()` on the `Sim` that `build` gets). Default false. */
  readonly trace?: boolean;
}

/**
 * Makes again the run a reproduction line describes (`error.repro` of a
 * failed run or of `CheckFailed`), with the same `build`: same seed, same
 * schedule, same world, so the same events in the same order — and the
 * same failure. With `{ trace: true }`, the `Sim` given to `build` keeps the
 * run's trace, to read what led to the failure.
 *
 * @example
 * ```ts
 * try { await check(build); } catch (e) { await replay(build, e.repro); }   // fails the same way
 * ```
 * @throws (rejects with) the run's failure, as `sim.run()` does.
 * @throws TypeError when `repro` is not a reproduction line.
 */
export async function replay(build: Build, repro: string, options: ReplayOptions = {}): Promise<unknown[]> {
  if (typeof build !== "function") throw new TypeError("replay(build, repro) expects build to be a function (sim) => { sim.host(…); … }");
  const { seed, policy, depth, steps, limit, domains } = parseRepro(repro);
  const sim = new Sim({
    seed,
    policy,
    ...(depth !== undefined ? { depth } : {}),
    ...(steps !== undefined ? { steps } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(domains !== undefined ? { domains } : {}),
    ...(options.trace !== undefined ? { trace: options.trace } : {}),
  });
  await build(sim);
  return sim.run();
}
