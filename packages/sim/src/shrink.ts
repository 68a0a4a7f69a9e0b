/**
 * Shrinking a failing run: from the choices it made, try smaller ones —
 * fewer preemptions, fewer and later faults, fewer steps — keeping each
 * that still fails the same way, until no try helps or the budget of runs
 * is spent. What is left is written as a schedule line.
 *
 * A try changes the list of choices, not the program: a block of schedule
 * choices set back to the runtime's order, a block of data choices set to
 * their first value (no loss, a latency's middle, `Math.random()` 0.5, a
 * disk that keeps everything), a choice lowered, a number in [0, 1) made
 * simpler (0, 0.25, 0.75…) or nearer 1 (a longer delay before a fault).
 * The run that follows the changed list makes its own choices where the
 * list no longer fits (a choice among fewer tasks); those are what the next
 * tries start from. A try is kept when the run fails the same way (see
 * `failureKind`) and is smaller: fewer preemptions, then fewer faults, then
 * fewer steps, then later faults, then a shorter line — so shrinking always
 * ends.
 */

import { ChoiceLog, FLOAT, Followed, floatOf } from "./choices.js";
import { failureKind, runFollowing, type WorldSettings } from "./follow.js";
import { formatRepro } from "./repro.js";
import { formatSchedule } from "./schedule.js";
import type { Build } from "./sim.js";
import { withRepro } from "./sim.js";
import type { Measure, RunSize } from "./size.js";

/**
 * Numbers in [0, 1) near its end, as choice values (0.75, 0.875, 0.9375,
 * 0.96875): a delay made longer may make a fault later, or never.
 */
const LATER = [2, 6, 14, 30];

/** How many times the first run's steps a try may take. */
const OVERRUN = 10;

/** Stops a try that runs far longer than the run it shrinks. */
class TooLong extends Error {}

/** @internal What shrinking found: the smallest run that failed the same way, and the first one's size. */
export interface Shrunk {
  readonly repro: string;
  readonly error: unknown;
  readonly size: RunSize;
  readonly originalSize: RunSize;
  /** How many runs shrinking took. */
  readonly runs: number;
}

/** A failing run the shrinker holds: its choices up to its failure, its error, and how it ranks. */
interface Candidate {
  readonly schedule: number[];
  readonly data: number[];
  /** Whether each data choice is a number in [0, 1). */
  readonly floats: boolean[];
  readonly error: unknown;
  readonly size: RunSize;
  readonly rank: number[];
}

/**
 * @internal Shrinks the failing run whose choices `log` holds, which failed
 * with `error`; `budget` is how many runs it may take. Returns null when
 * following `log` does not fail the same way (a world that is not
 * deterministic: the seed line stays the reproduction).
 */
export async function shrink(
  build: Build,
  log: ChoiceLog,
  error: unknown,
  settings: WorldSettings,
  budget: number,
): Promise<Shrunk | null> {
  const kind = failureKind(error);
  let runs = 0;
  let stepLimit = Infinity;
  const attempt = async (schedule: readonly number[], data: readonly number[]): Promise<Candidate | null> => {
    runs++;
    const choices = new Followed(schedule, data, false, new ChoiceLog());
    choices.stepLimit = stepLimit;
    const outcome = await runFollowing(build, choices, settings, (sim) => {
      choices.overrun = () => sim.simulated.fail(new TooLong());
    });
    if (outcome.ok || failureKind(outcome.error) !== kind) return null;
    return candidateOf(outcome.sim.simulated.measure!, choices.log!, outcome.error);
  };
  const first = await attempt(log.schedule, log.data);
  if (first === null) return null;
  // A try may make a run that never ends (a loop whose sleeps became 0): it stops, and is not kept.
  stepLimit = OVERRUN * Math.max(first.size.steps, 1000);
  let best = first;
  /** Tries lists; keeps the run when it is smaller (for `fewerFaults`, only when it has fewer faults). */
  const tryLists = async (schedule: number[], data: number[], fewerFaults = false): Promise<boolean> => {
    if (runs >= budget) return false;
    const found = await attempt(schedule, data);
    if (found === null || compare(found.rank, best.rank) >= 0) return false;
    if (fewerFaults && found.size.faults >= best.size.faults) return false;
    best = found;
    return true;
  };
  const schedule = (values: number[]) => tryLists(values, best.data);
  const data = (values: number[]) => tryLists(best.schedule, values);
  for (let progress = true; progress && runs < budget; ) {
    progress = false;
    // Coarse to fine: whole lists, then halves, quarters… A long run loses
    // most of its choices in a few tries; what is left is tried one by one.
    for (
      let size = highestPowerOfTwo(Math.max(best.schedule.length, best.data.length));
      size >= 1 && runs < budget;
      size = Math.floor(size / 2)
    ) {
      for (let at = 0; at < best.schedule.length && runs < budget; at += size) {
        const zeroed = zeroedBlock(best.schedule, at, size);
        if (zeroed !== null && (await schedule(zeroed))) progress = true;
      }
      for (let at = 0; at < best.data.length && runs < budget; at += size) {
        const zeroed = zeroedBlock(best.data, at, size);
        if (zeroed !== null && (await data(zeroed))) {
          progress = true;
          continue;
        }
        // Numbers in [0, 1) kept to their first bits: simpler, and shorter to write.
        for (const bits of [1, 4, 16]) {
          const rounded = roundedBlock(best.data, best.floats, at, size, 2 ** bits);
          if (rounded !== null && runs < budget && (await data(rounded))) {
            progress = true;
            break;
          }
        }
      }
    }
    // Then each choice lowered: a later task to the next one, a number to a simpler one.
    for (let at = 0; at < best.schedule.length && runs < budget; at++) {
      if (best.schedule[at]! > 1 && (await schedule(replaced(best.schedule, at, 1)))) progress = true;
    }
    for (let at = 0; at < best.data.length && runs < budget; at++) {
      for (const simpler of simplerValues(best.data[at]!, best.floats[at]!)) {
        if (runs >= budget) break;
        if (await data(replaced(best.data, at, simpler))) {
          progress = true;
          break;
        }
      }
    }
    // Numbers made nearer 1, kept only for fewer faults (a longer delay before a fault, which then never comes).
    for (let at = 0; at < best.data.length && runs < budget && best.size.faults !== 0; at++) {
      if (!best.floats[at]) continue;
      for (const later of LATER.filter((v) => floatOf(v) > floatOf(best.data[at]!))) {
        if (runs >= budget) break;
        if (await tryLists(best.schedule, replaced(best.data, at, later), true)) {
          progress = true;
          break;
        }
      }
    }
  }
  return {
    repro: formatRepro({ schedule: best, ...settingsOf(settings) }),
    error: withRepro(best.error, formatRepro({ schedule: best, ...settingsOf(settings) })),
    size: best.size,
    originalSize: first.size,
    runs,
  };
}

function settingsOf(settings: WorldSettings): { limit?: number; domains?: number } {
  return {
    ...(settings.limit !== undefined ? { limit: settings.limit } : {}),
    ...(settings.domains !== undefined ? { domains: settings.domains } : {}),
  };
}

/** The run's choices up to its failure, and its rank. */
function candidateOf(measure: Measure, log: ChoiceLog, error: unknown): Candidate {
  const failed = measure.failed;
  const schedule = failed === null ? log.schedule : log.schedule.slice(0, failed.schedule);
  const data = failed === null ? log.data : log.data.slice(0, failed.data);
  const floats = log.kinds.slice(0, data.length).map((k) => k === FLOAT);
  const size = failed?.size ?? measure.now();
  const faultTimes = failed?.faultTimes ?? [];
  const rank = [size.preemptions, size.faults, size.steps, ...faultTimes.map((t) => -t), formatSchedule({ schedule, data }).length];
  return { schedule, data, floats, error, size, rank };
}

/** Lexicographic order of two ranks (the fault times make ranks of equal fault counts equally long). */
function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** `values` with `[at, at + size)` set to 0, or null when they are 0 already. */
function zeroedBlock(values: readonly number[], at: number, size: number): number[] | null {
  if (!values.slice(at, at + size).some((v) => v !== 0)) return null;
  const zeroed = values.slice();
  zeroed.fill(0, at, at + size);
  return zeroed;
}

/** `values` with the numbers of `[at, at + size)` kept to their first bits (`scale` = 2^bits), or null when that changes nothing. */
function roundedBlock(values: readonly number[], floats: readonly boolean[], at: number, size: number, scale: number): number[] | null {
  let changed = false;
  const rounded = values.map((v, i) => {
    if (i < at || i >= at + size || !floats[i] || v < scale) return v;
    changed = true;
    return v % scale;
  });
  return changed ? rounded : null;
}

function replaced(values: readonly number[], at: number, value: number): number[] {
  const copy = values.slice();
  copy[at] = value;
  return copy;
}

function highestPowerOfTwo(n: number): number {
  let p = 1;
  while (p * 2 <= n) p *= 2;
  return n === 0 ? 0 : p;
}

/**
 * Simpler values than `value`, simplest first. A number in [0, 1) is kept
 * with its bits reversed (see `floatValue`): keeping the low `b` bits of
 * `value` keeps the number's first `b` bits, rounding it to a simpler one
 * (0, then 0.25 or 0.75…). Any other choice: the values below it.
 */
function simplerValues(value: number, float: boolean): number[] {
  if (value <= 1) return [];
  if (!float) return Array.from({ length: Math.min(value - 1, 8) }, (_, i) => i + 1);
  const simpler: number[] = [];
  for (let scale = 2; scale <= value; scale *= 2) {
    const kept = value % scale;
    if (kept !== 0 && !simpler.includes(kept)) simpler.push(kept);
  }
  return simpler;
}
