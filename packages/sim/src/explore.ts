/**
 * `explore`: every distinct schedule of a small world, depth first, up to a
 * bound — so that "no failure" means something.
 *
 * A run follows a path of choices and takes the first value past its end;
 * the next run changes the last choice that has an alternative left, and so
 * on until none has (the space is exhausted) or a run fails. Choices are
 * which ready task runs next and the kernel's ties (`awaitFirst` among
 * tasks that ended together); every data choice takes its first value
 * (a latency's middle, no loss, `Math.random()` 0.5, a disk that keeps
 * everything), so a run needs no seed.
 *
 * The bound: at most `preemptions` preemptions (a task of a host runs while
 * another task of that host has been ready longer; choosing which host runs
 * next is free), and choices only among the first `steps` steps (past them,
 * the runtime's own order).
 *
 * Partial-order reduction: two steps commute when they touch nothing in
 * common, and then only one of their orders is run (sleep sets, Godefroid
 * 1996). What a step touches is hosts:
 * - its own host: every task of a host may share its memory;
 * - the host a packet it sends goes to, and the host of a connection whose
 *   window its read opens;
 * - the host of every task it spawns, wakes, cancels or ends;
 * - the hosts a fault it makes acts on (a partition, a crash…);
 * - the events that fire before the next step: the host a packet reaches;
 * - the world's root: a step of its own, or one that tells it of a host's
 *   end or of a failure;
 * - the whole world: a step of a signal handler, a signal, a timer's
 *   callback (`setTimeout` in the world).
 * So steps of different hosts that do not reach one another are not
 * reordered. Memory shared by two hosts (an object two hosts' `main`s close
 * over) is not seen: such a world needs `reduce: false`. Preemptions are
 * counted per host, so that reordering steps that commute never changes a
 * schedule's count: with the reduction, the bound keeps every schedule it
 * keeps without it, up to reordering.
 */
import type * as B from "@bobbin/core";
import { checkOptionNames } from "@bobbin/core/lowlevel";
import { ChoiceLog, Followed, type Kind, TIE } from "./choices.js";
import { CallbackEvent } from "./clock.js";
import { ExploreFailed } from "./errors.js";
import { runFollowing, type WorldSettings } from "./follow.js";
import type { Host } from "./host.js";
import { Packet } from "./packet.js";
import { formatRepro } from "./repro.js";
import type { Build } from "./sim.js";
import { withRepro } from "./sim.js";
import type { World, WorldObserver } from "./world.js";

/**
 * Options of {@link explore}.
 *
 * @example
 * ```ts
 * await explore(build, { bound: { preemptions: 1, steps: 200 }, runs: 5000 });
 * ```
 */
export interface ExploreOptions {
  /**
   * How far to look: a number of preemptions, or `{ preemptions, steps }`
   * (default `{ preemptions: 2 }`, every step).
   */
  readonly bound?: number | { readonly preemptions?: number | undefined; readonly steps?: number | undefined } | undefined;
  /** The most runs (default 10,000): when they are spent, the report says the space was not exhausted. */
  readonly runs?: number | undefined;
  /** Run one order of steps that commute (default true); false runs them all (the naive count). */
  readonly reduce?: boolean | undefined;
  /** Each run's limit in virtual seconds (see `SimOptions.limit`). */
  readonly limit?: number | undefined;
  /** Each run's simulated worker domains (see `SimOptions.domains`). */
  readonly domains?: number | undefined;
}

/**
 * What {@link explore} reports when no schedule failed.
 *
 * @example
 * ```ts
 * const { schedules, pruned, exhausted } = await explore(build, { bound: 2 });
 * ```
 */
export interface ExploreReport {
  /** How many schedules ran to their end. */
  readonly schedules: number;
  /** How many runs the reduction stopped early: they had begun a schedule that only reorders steps of one already run. */
  readonly pruned: number;
  /** Whether every schedule within the bound was run (false: `runs` were spent first). */
  readonly exhausted: boolean;
}

const DEFAULT_PREEMPTIONS = 2;
const DEFAULT_RUNS = 10_000;

/** The options `explore` takes. */
const EXPLORE_OPTION_NAMES: readonly (keyof ExploreOptions)[] = ["bound", "runs", "reduce", "limit", "domains"];

/**
 * Runs every distinct schedule of `build`'s world within the bound, one
 * after another, and stops at the first that fails: it rejects with
 * `ExploreFailed`, whose `repro` replays that schedule
 * (`replay(build, error.repro)`). Resolves with how many schedules ran and
 * whether that was all of them. No seed: every run is a path of choices.
 * Meant for small worlds: the count grows fast with tasks and steps.
 *
 * @example
 * ```ts
 * const report = await explore(build, { bound: 2 });   // { schedules: 412, pruned: 96, exhausted: true }
 * ```
 * @throws (rejects with) ExploreFailed for the first failing schedule; what `build` throws.
 * @throws TypeError when two runs of the same choices differ (`build` must make the same world each time); TypeError / RangeError for invalid options.
 */
export async function explore(build: Build, options: ExploreOptions = {}): Promise<ExploreReport> {
  if (typeof build !== "function")
    throw new TypeError("explore(build, options) expects build to be a function (sim) => { sim.host(…); … }");
  if (options === null || typeof options !== "object") throw new TypeError("explore(build, options) expects an options object");
  checkOptionNames("explore(build, options)", options, EXPLORE_OPTION_NAMES);
  const bound = boundOf(options.bound);
  const { runs = DEFAULT_RUNS, reduce = true, limit, domains } = options;
  if (!Number.isInteger(runs) || runs < 1) throw new RangeError(`explore({ runs }) must be an integer ≥ 1, got ${String(runs)}`);
  if (typeof reduce !== "boolean") throw new TypeError(`explore({ reduce }) expects true or false, got ${String(reduce)}`);
  const settings: WorldSettings = { limit, domains };
  const path: Branch[] = [];
  let schedules = 0;
  let pruned = 0;
  for (let run = 0; run < runs; run++) {
    const choices = new Exploring(path, bound, reduce);
    const outcome = await runFollowing(build, choices, settings, (sim) => choices.attach(sim.simulated));
    choices.end();
    if (choices.drift !== null) throw choices.drift;
    if (choices.pruned) pruned++;
    else schedules++;
    if (!outcome.ok && !choices.pruned) {
      const failed = outcome.sim.simulated.measure?.failed;
      const log = failed ? choices.log!.prefix(failed.schedule, failed.data) : choices.log!;
      const repro = formatRepro({
        schedule: log,
        ...(limit !== undefined ? { limit } : {}),
        ...(domains !== undefined ? { domains } : {}),
      });
      throw new ExploreFailed(repro, run, withRepro(outcome.error, repro));
    }
    if (!backtrack(path, bound, reduce)) return { schedules, pruned, exhausted: true };
  }
  return { schedules, pruned, exhausted: false };
}

interface Bound {
  readonly preemptions: number;
  readonly steps: number;
}

function boundOf(bound: ExploreOptions["bound"]): Bound {
  if (bound === undefined) return { preemptions: DEFAULT_PREEMPTIONS, steps: Infinity };
  const { preemptions = typeof bound === "number" ? bound : Infinity, steps = Infinity } =
    typeof bound === "number" ? {} : bound === null || typeof bound !== "object" ? { preemptions: Number.NaN } : bound;
  for (const [name, value] of [
    ["preemptions", preemptions],
    ["steps", steps],
  ] as const) {
    if (!(value === Infinity || (Number.isInteger(value) && value >= 0)))
      throw new RangeError(
        `explore({ bound }): ${name} must be an integer ≥ 0, got ${String(value)}; bound is a number of preemptions or { preemptions, steps }`,
      );
  }
  return { preemptions, steps };
}

/** What a step touched: hosts (by index; 0 for the world's root), or the whole world. */
class Touched {
  all = false;
  readonly hosts = new Set<number>();

  add(host: Host | null): void {
    if (host === null) this.all = true;
    else this.hosts.add(host.index);
  }

  addRoot(): void {
    this.hosts.add(0);
  }

  /** Whether two steps touch something in common (and so do not commute). */
  meets(other: Touched): boolean {
    if (this.all || other.all) return true;
    for (const h of this.hosts) if (other.hosts.has(h)) return true;
    return false;
  }
}

/** A point of the path where a run had a choice: which ready task, or a tie. */
interface Branch {
  readonly tie: boolean;
  /** How many values the choice had. */
  readonly width: number;
  /** The ready tasks' uids and hosts (index; 0 for the world's own tasks); empty for a tie. */
  readonly uids: readonly number[];
  readonly hosts: readonly number[];
  /** The preemptions spent before it. */
  readonly spent: number;
  /** The tasks asleep when the run reached it (reduction): their step, taken here, only reorders one already run. */
  readonly asleep: ReadonlyMap<number, Touched>;
  /** The values run so far, with what the step of each touched. */
  readonly done: { readonly uid: number; readonly touched: Touched }[];
  chosen: number;
  /** What the chosen step touched, once it ran. */
  touched: Touched | null;
}

/** Whether choosing `i` at `branch` is a preemption. */
function costOf(hosts: readonly number[], i: number): number {
  for (let j = 0; j < i; j++) if (hosts[j] === hosts[i]) return 1;
  return 0;
}

/** The value of `branch` to run next, if any is left within the bound. */
function nextValue(branch: Branch, bound: Bound, reduce: boolean): number | undefined {
  if (branch.tie) return branch.chosen + 1 < branch.width ? branch.chosen + 1 : undefined;
  for (let i = 0; i < branch.width; i++) {
    const uid = branch.uids[i]!;
    if (branch.done.some((d) => d.uid === uid)) continue;
    if (reduce && branch.asleep.has(uid)) continue;
    if (branch.spent + costOf(branch.hosts, i) <= bound.preemptions) return i;
  }
  return undefined;
}

/** Moves the path to the next schedule; false when none is left. */
function backtrack(path: Branch[], bound: Bound, reduce: boolean): boolean {
  while (path.length !== 0) {
    const branch = path[path.length - 1]!;
    if (!branch.tie) branch.done.push({ uid: branch.uids[branch.chosen]!, touched: branch.touched ?? everything() });
    const next = nextValue(branch, bound, reduce);
    if (next !== undefined) {
      branch.chosen = next;
      branch.touched = null;
      return true;
    }
    path.pop();
  }
  return false;
}

function everything(): Touched {
  const t = new Touched();
  t.all = true;
  return t;
}

/** Stops a run the reduction found redundant. */
class Pruned extends Error {
  constructor() {
    super("this schedule only reorders steps of one already run");
  }
}

/** The choices of one run of `explore`: the path, then new branches, each taking its first value left. */
class Exploring extends Followed implements WorldObserver {
  /** Whether the run was stopped as redundant. */
  pruned = false;
  /** Why the run was stopped when it did not follow its path: `build` made another world. */
  drift: TypeError | null = null;
  private world: World | null = null;
  /** The next branch of the path to follow. */
  private at = 0;
  private steps = 0;
  private spent = 0;
  /** Tasks whose next step is known to only reorder a schedule already run (by uid), with what it touches. */
  private readonly asleep = new Map<number, Touched>();
  /** What the step running now touches (and the events after it). */
  private touched = new Touched();
  /** The branch whose chosen step runs now. */
  private current: Branch | null = null;

  constructor(
    private readonly path: Branch[],
    private readonly bound: Bound,
    private readonly reduce: boolean,
  ) {
    super([], [], false, new ChoiceLog());
  }

  /** Hears the world's run. */
  attach(world: World): void {
    this.world = world;
    world.observer = this;
    world.clock.onFire = (event) => {
      if (event instanceof Packet) this.touch(event.to);
      else if (event instanceof CallbackEvent) this.touch(null); // a timer's callback may be any code of the world
    };
  }

  touch(host: Host | null): void {
    this.touched.add(host);
  }

  touchRoot(): void {
    this.touched.addRoot();
  }

  /** The run is over: what its last step touched. */
  end(): void {
    if (this.current !== null && this.current.touched === null) this.current.touched = this.touched;
  }

  protected override pickOf(ready: readonly B.Task<unknown>[]): number {
    if (this.pruned) return 0;
    this.stepDone();
    this.steps++;
    const hostOf = (task: B.Task<unknown>) => this.world!.hostOf(task);
    const free = this.steps > this.bound.steps;
    let i: number;
    if (ready.length === 1 || free) {
      // No choice here (or none any more): the runtime's order — unless its step only reorders one already run.
      i = 0;
      if (!free && this.reduce && this.asleep.has(ready[0]!.uid)) return this.prune();
      if (free) this.asleep.clear();
      this.current = null;
    } else {
      const branch = this.branch(ready, hostOf);
      if (branch === null) return this.prune();
      i = branch.chosen;
      this.current = branch;
      this.spent += costOf(branch.hosts, i);
    }
    this.world!.touchTask(ready[i]!);
    return i;
  }

  protected override next(kind: Kind, bound: number): number {
    if (kind !== TIE || this.pruned) return 0;
    const branch = this.follow(bound, [], []) ?? this.grow(this.make(true, bound, [], [], 0));
    return branch.chosen;
  }

  /** The branch of this pick: the path's next one, or a new one (null: nothing is left to run here). */
  private branch(ready: readonly B.Task<unknown>[], hostOf: (task: B.Task<unknown>) => Host | null): Branch | null {
    const uids = ready.map((t) => t.uid);
    const hosts = ready.map((t) => hostOf(t)?.index ?? 0);
    const followed = this.follow(ready.length, uids, hosts);
    if (followed !== null) {
      // Its values run before this one sleep in this one's subtree, until a step meets them.
      if (this.reduce) for (const d of followed.done) this.asleep.set(d.uid, d.touched);
      return followed;
    }
    const fresh = this.make(false, ready.length, uids, hosts, this.spent);
    const first = nextValue(fresh, this.bound, this.reduce);
    if (first === undefined) return null; // every task asleep, or past the bound
    fresh.chosen = first;
    return this.grow(fresh);
  }

  /** The path's next branch, checked against this run (a run that strays from it is stopped). */
  private follow(width: number, uids: readonly number[], hosts: readonly number[]): Branch | null {
    if (this.at >= this.path.length || this.drift !== null) return null;
    const branch = this.path[this.at++]!;
    if (branch.width === width && branch.uids.every((u, i) => u === uids[i]) && branch.hosts.every((h, i) => h === hosts[i])) return branch;
    this.drift = new TypeError(
      "explore(build): the same choices led to different worlds in two runs; build must make the same world each time (no state kept from one run to the next, nothing from outside the world)",
    );
    this.pruned = true;
    this.world!.fail(this.drift);
    return branch;
  }

  private make(tie: boolean, width: number, uids: readonly number[], hosts: readonly number[], spent: number): Branch {
    return { tie, width, uids, hosts, spent, asleep: new Map(this.asleep), done: [], chosen: 0, touched: null };
  }

  /** Puts a new branch at the end of the path. */
  private grow(branch: Branch): Branch {
    this.path.push(branch);
    this.at++;
    return branch;
  }

  /** The step before this one is over: the tasks asleep that it met wake up. */
  private stepDone(): void {
    const touched = this.touched;
    if (this.current !== null) this.current.touched = touched;
    if (this.reduce) for (const [uid, t] of this.asleep) if (t.meets(touched)) this.asleep.delete(uid);
    this.touched = new Touched();
  }

  private prune(): number {
    this.pruned = true;
    this.world!.fail(new Pruned());
    return 0;
  }
}
