/**
 * `check` and `replay`: search many runs of a world for a failure, and make
 * a failing run again from its one-line reproduction.
 */
import { checkOptionNames } from "@bobbin/core/lowlevel";
import { ChoiceLog, Followed } from "./choices.js";
import { CheckFailed } from "./errors.js";
import { simOptions } from "./follow.js";
import type { PolicyName } from "./policy.js";
import { runSeed } from "./random.js";
import { parseRepro } from "./repro.js";
import { shrink } from "./shrink.js";
import { type Build, DEFAULT_STEPS, KEEP, Sim } from "./sim.js";

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
  readonly runs?: number | undefined;
  /** The seed the runs' seeds come from (default: a random one, named in the failure). */
  readonly seed?: number | undefined;
  /** The schedule of every run (default `"random"`). */
  readonly policy?: PolicyName | undefined;
  /** PCT's bug depth (default 3). */
  readonly depth?: number | undefined;
  /** Each run's limit in virtual seconds (see `SimOptions.limit`). */
  readonly limit?: number | undefined;
  /** Each run's simulated worker domains (see `SimOptions.domains`). */
  readonly domains?: number | undefined;
  /**
   * How many runs shrinking a failure may take (default 300); 0 or false
   * reports the failing run as found, `true` the default.
   */
  readonly shrink?: number | boolean | undefined;
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

/** How many runs shrinking a failure takes at most, by default. */
const SHRINK_RUNS = 300;

/** The options `check` takes. */
const CHECK_OPTION_NAMES: readonly (keyof CheckOptions)[] = ["runs", "seed", "policy", "depth", "limit", "domains", "shrink"];

/**
 * Runs `build`'s world `runs` times, each with its own seed drawn from
 * `seed`, and stops at the first failure. It then shrinks the failing run —
 * fewer preemptions, fewer and later faults, fewer steps, as long as it
 * fails the same way — and rejects with `CheckFailed`: its `repro` is the
 * line that replays the smallest run (`replay(build, error.repro)`, a
 * `schedule=` line), `original` the seed line of the run first found, and
 * `cause` the smallest run's error. Under PCT, each run's step horizon is
 * the longest run seen so far.
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
  checkOptionNames("check(build, options)", options, CHECK_OPTION_NAMES);
  const { runs = 100, seed = Math.floor(Math.random() * 2 ** 32), policy = "random", depth, limit, domains } = options;
  if (!Number.isInteger(runs) || runs < 1) throw new RangeError(`check({ runs }) must be an integer ≥ 1, got ${String(runs)}`);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`check({ seed }) must be a safe integer, got ${String(seed)}`);
  const budget = shrinkBudget(options.shrink);
  let steps = DEFAULT_STEPS;
  for (let i = 0; i < runs; i++) {
    const log = budget !== 0 ? new ChoiceLog() : undefined;
    const sim = new Sim({
      seed: runSeed(seed, i),
      policy,
      ...(depth !== undefined ? { depth } : {}),
      ...(policy === "pct" ? { steps } : {}),
      ...simOptions({ limit, domains }),
      ...(log !== undefined ? { [KEEP]: log } : {}),
    });
    await build(sim);
    try {
      await sim.run();
    } catch (error) {
      const shrunk = log === undefined ? null : await shrink(build, log, error, { limit, domains }, budget);
      throw new CheckFailed(sim.repro, i, runs, error, shrunk);
    }
    steps = Math.max(steps, sim.stepsTaken);
  }
  return { runs, seed };
}

function shrinkBudget(shrink: unknown): number {
  if (shrink === undefined || shrink === true) return SHRINK_RUNS;
  if (shrink === false) return 0;
  if (!Number.isInteger(shrink) || (shrink as number) < 0)
    throw new RangeError(`check({ shrink }) must be true, false or a number of runs ≥ 0, got ${String(shrink)}`);
  return shrink as number;
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
  readonly trace?: boolean | undefined;
}

/**
 * Makes again the run a reproduction line describes (`error.repro` of a
 * failed run, of `CheckFailed` or `ExploreFailed`; `original` of
 * `CheckFailed`), with the same `build`: the same choices — drawn from the
 * same seed by the same policy (`seed=` line), or the choices themselves
 * (`schedule=` line, which needs no generator) — and the same world, so the
 * same events in the same order, and the same failure. With
 * `{ trace: true }`, the `Sim` given to `build` keeps the run's trace, to
 * read what led to the failure.
 *
 * @example
 * ```ts
 * try { await check(build); } catch (e) { await replay(build, e.repro); }   // fails the same way
 * ```
 * @throws (rejects with) the run's failure, as `sim.run()` does.
 * @throws TypeError for an option `replay` does not have; when `repro` is not a reproduction line, or is a schedule
 * that does not fit the world `build` makes (a choice out of range, choices
 * left when the run ended).
 */
export async function replay(build: Build, repro: string, options: ReplayOptions = {}): Promise<unknown[]> {
  if (typeof build !== "function") throw new TypeError("replay(build, repro) expects build to be a function (sim) => { sim.host(…); … }");
  if (options === null || typeof options !== "object") throw new TypeError("replay(build, repro, options) expects an options object");
  checkOptionNames("replay(build, repro, options)", options, ["trace"]);
  const line = parseRepro(repro);
  const settings = { limit: line.limit, domains: line.domains, trace: options.trace };
  if ("schedule" in line) {
    const choices = new Followed(line.schedule.schedule, line.schedule.data, true, new ChoiceLog());
    const sim = new Sim(simOptions(settings, choices));
    await build(sim);
    const value = await sim.run();
    if (choices.unread) {
      throw new TypeError(
        "replay(build, repro): the run ended before its schedule did, so the schedule was not made by this world; was the line made with this build?",
      );
    }
    return value;
  }
  const sim = new Sim({
    seed: line.seed,
    policy: line.policy,
    ...(line.depth !== undefined ? { depth: line.depth } : {}),
    ...(line.steps !== undefined ? { steps: line.steps } : {}),
    ...simOptions(settings),
  });
  await build(sim);
  return sim.run();
}
