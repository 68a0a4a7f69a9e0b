/**
 * The choices of a run: everything the world leaves to chance. The schedule
 * — which task runs next, at each step where more than one is ready — and
 * the data: `awaitFirst` ties, latencies, losses, `Math.random()`, what a
 * crash keeps of a disk. Given its `build`, a run is a function of its
 * choices.
 *
 * A run either draws its choices from the world's generator, seeded (a
 * `seed=` line), or follows a list of them (a `schedule=` line, a candidate
 * of the shrinker, a path of the explorer) and asks no generator at all —
 * which is why a schedule line survives a change of the random stream.
 * Past the end of the list, every choice is its first value: the task ready
 * longest (the runtime's own order), the first of a tie, 0.5 for a number in
 * [0, 1), no loss, a disk that keeps everything.
 */
import type * as B from "@bobbin/core";
import type * as L from "@bobbin/core/lowlevel";
import { makePolicy, type PolicyName } from "./policy.js";
import type { WorldRandom } from "./random.js";

/** @internal The kinds of data choices. */
export const TIE = 0;
export const FLOAT = 1;
export const CHANCE = 2;
export const BYTE = 3;
export const TORN = 4;
/** @internal A kind of data choice: a tie of the kernel, a number in [0, 1), a fault or not, a byte, what a crash loses of a disk. */
export type Kind = typeof TIE | typeof FLOAT | typeof CHANCE | typeof BYTE | typeof TORN;

/** @internal How many values a number in [0, 1) has: 53 bits' worth. */
export const FLOAT_VALUES = 2 ** 53;

/** @internal The choices a run made, in order. */
export class ChoiceLog {
  /** At each step where more than one task was ready: the index of the one that ran (0: the one ready longest). */
  readonly schedule: number[] = [];
  /** Every other choice: its value (for a number in [0, 1), see {@link floatValue}), its kind, how many values it had. */
  readonly data: number[] = [];
  readonly kinds: Kind[] = [];
  readonly bounds: number[] = [];

  /** Keeps a data choice. */
  push(kind: Kind, bound: number, value: number): void {
    this.data.push(value);
    this.kinds.push(kind);
    this.bounds.push(bound);
  }

  /** How many choices were made: schedule and data. */
  get length(): number {
    return this.schedule.length + this.data.length;
  }

  /** A log of the first `schedule` and `data` choices of this one. */
  prefix(schedule: number, data: number): ChoiceLog {
    const log = new ChoiceLog();
    log.schedule.push(...this.schedule.slice(0, schedule));
    log.data.push(...this.data.slice(0, data));
    log.kinds.push(...this.kinds.slice(0, data));
    log.bounds.push(...this.bounds.slice(0, data));
    return log;
  }
}

/**
 * A number in [0, 1) as a choice's value: its 53 bits, the first one
 * flipped, in reverse order. So the first value, 0, is 0.5 — the middle of
 * every range: a latency's mean, a random delay that is not zero (a loop
 * that sleeps `Math.random()` seconds still lets time move) — and simple
 * numbers are small: 0 is 1, 0.25 is 2, 0.75 is 3 — short in a schedule
 * line, and what the shrinker tries first.
 *
 * @internal
 */
export function floatValue(bits: number): number {
  return reverse53(flipFirst(bits));
}

/** @internal The number in [0, 1) of a choice's value (see {@link floatValue}). */
export function floatOf(value: number): number {
  return flipFirst(reverse53(value)) / FLOAT_VALUES;
}

/** Flips the first of 53 bits (without going past 2^53, where numbers lose their last bits). */
function flipFirst(bits: number): number {
  return bits >= 2 ** 52 ? bits - 2 ** 52 : bits + 2 ** 52;
}

/** @internal The bits of a 53-bit integer in reverse order. */
function reverse53(value: number): number {
  let reversed = 0;
  for (let i = 0; i < 53; i++) {
    reversed = reversed * 2 + (value % 2);
    value = Math.floor(value / 2);
  }
  return reversed;
}

/** @internal Hears every step of a run that follows its choices. */
export interface StepListener {
  /** `ready[chosen]` is about to run a step (`ready` holds one task when there was no choice). */
  step(ready: readonly B.Task<unknown>[], chosen: number): void;
}

/** @internal Where a run's choices come from; `log` keeps them when set. */
export abstract class Choices {
  /** The kernel's scheduling policy; undefined for the runtime's own order. */
  abstract readonly policy: L.SchedulingPolicy | undefined;
  /** The kernel's random source: ties of `awaitOne`/`awaitFirst`/`get`, the domain of a call. */
  readonly ties: L.RandomSource = { below: (bound) => this.choose(TIE, bound, 0) };

  constructor(readonly log: ChoiceLog | null) {}

  /** A choice of `kind` among `bound` values (≥ 2); `p` is a chance's probability. */
  protected abstract next(kind: Kind, bound: number, p: number): number;

  private choose(kind: Kind, bound: number, p: number): number {
    if (bound <= 1) return 0; // one value is no choice
    const value = this.next(kind, bound, p);
    this.log?.push(kind, bound, value);
    return value;
  }

  /** A number in [0, 1): a latency's draw, `Math.random()`. */
  float(): number {
    return floatOf(this.choose(FLOAT, FLOAT_VALUES, 0));
  }

  /** Whether a fault of probability `p` happens (a loss, a reordering); 0 never chooses. */
  chance(p: number): boolean {
    return p > 0 && (p >= 1 || this.choose(CHANCE, 2, p) === 1);
  }

  /** A random byte (`crypto.getRandomValues`). */
  byte(): number {
    return this.choose(BYTE, 256, 0);
  }

  /** How many of a crashed disk's `units` unsynced units are lost, from the last (0: none). */
  torn(units: number): number {
    return this.choose(TORN, units + 1, 0);
  }
}

/**
 * Choices drawn from the world's generator, the schedule by a named policy
 * (`fifo`, `random`, `pct`): a `seed=` run. The draws are those the
 * simulator always made, so a seed replays as it always did.
 *
 * @internal
 */
export class Drawn extends Choices {
  readonly policy: L.SchedulingPolicy | undefined;
  /** PCT's policy, whose step count `check` reads. */
  readonly pct: { readonly maxStep: number } | null;

  constructor(
    private readonly random: WorldRandom,
    name: PolicyName,
    depth: number,
    steps: number,
    log: ChoiceLog | null,
  ) {
    super(log);
    const policy = makePolicy(name, random, depth, steps);
    this.pct = name === "pct" ? (policy as unknown as { maxStep: number }) : null;
    this.policy = policy === undefined || log === null ? policy : logged(policy, log);
  }

  protected next(kind: Kind, bound: number, p: number): number {
    switch (kind) {
      case FLOAT:
        return floatValue(this.random.bits53());
      case CHANCE:
        return this.random.float() < p ? 1 : 0;
      case TORN:
        return drawTorn(this.random, bound - 1);
      default:
        return this.random.below(bound);
    }
  }

  override float(): number {
    if (this.log !== null) return super.float();
    return this.random.float(); // the same number, without reversing bits nobody keeps
  }
}

/** A policy that logs what `policy` picks. */
function logged(policy: L.SchedulingPolicy, log: ChoiceLog): L.SchedulingPolicy {
  return {
    pick(ready) {
      const i = policy.pick(ready);
      log.schedule.push(i);
      return i;
    },
  };
}

/**
 * What a crash does to a file's unsynced units, drawn: a third of the time
 * nothing is lost (the system had written them out), a third of the time
 * all of them, and a third of the time the file is torn at a point drawn
 * uniformly among them.
 */
function drawTorn(random: WorldRandom, units: number): number {
  switch (random.below(3)) {
    case 0:
      return 0;
    case 1:
      return units;
    default:
      return 1 + random.below(units);
  }
}

/**
 * Choices followed from lists (a `schedule=` line, a shrinker's candidate),
 * then the first value of every choice once a list runs out. A value that
 * does not fit its choice (3 among 2 ready tasks) is a misfit: `strict`
 * reports it to `misfit` (a line that was not made by this `build`), else it
 * is read as the first value (a shrinker's candidate may shift choices).
 *
 * Its policy is asked before every step, so that `listener` hears each one.
 *
 * @internal
 */
export class Followed extends Choices {
  readonly policy: L.SchedulingPolicy;
  /** Hears the first misfit of a strict run. */
  misfit: ((message: string) => void) | null = null;
  /** Hears every step. */
  listener: StepListener | null = null;
  /** Hears once when the run takes more than `stepLimit` steps. */
  overrun: (() => void) | null = null;
  stepLimit = Infinity;
  private taken = 0;
  private s = 0;
  private d = 0;

  constructor(
    private readonly schedule: readonly number[],
    private readonly data: readonly number[],
    private readonly strict: boolean,
    log: ChoiceLog | null,
  ) {
    super(log);
    this.policy = {
      everyStep: true,
      pick: (ready) => {
        if (++this.taken === this.stepLimit + 1) this.overrun?.();
        const i = this.pickOf(ready);
        if (ready.length > 1) this.log?.schedule.push(i);
        this.listener?.step(ready, i);
        return i;
      },
    };
  }

  /** Whether choices of the lists were left unread (the run ended before its line did). */
  get unread(): boolean {
    return this.s < this.schedule.length || this.d < this.data.length;
  }

  /** Which of `ready` runs next (asked before every step). */
  protected pickOf(ready: readonly B.Task<unknown>[]): number {
    if (ready.length === 1) return 0;
    const at = this.s++;
    return this.fit(
      this.schedule[at] ?? 0,
      ready.length,
      () => `step choice ${at + 1} is ${this.schedule[at]}, among ${ready.length} ready tasks`,
    );
  }

  protected next(_kind: Kind, bound: number): number {
    const at = this.d++;
    return this.fit(this.data[at] ?? 0, bound, () => `data choice ${at + 1} is ${this.data[at]}, among ${bound} values`);
  }

  private fit(value: number, bound: number, what: () => string): number {
    if (value < bound) return value;
    if (this.strict) this.misfit?.(what());
    return 0;
  }
}
