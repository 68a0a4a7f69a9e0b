/**
 * Runs of a world whose choices are given rather than drawn: what `replay`
 * of a schedule line, the shrinker and `explore` do, run after run.
 */

import type { Choices } from "./choices.js";
import type { Build } from "./sim.js";
import { CHOICES, type ChoosingOptions, Sim } from "./sim.js";

/** @internal The options of a world that do not come from its choices. */
export interface WorldSettings {
  readonly limit?: number | undefined;
  readonly domains?: number | undefined;
  readonly trace?: boolean | undefined;
}

/** @internal How a run went. */
export type Outcome = { readonly sim: Sim } & (
  | { readonly ok: true; readonly value: unknown[] }
  | { readonly ok: false; readonly error: unknown }
);

/** @internal The `Sim` options for `settings` and `choices`. */
export function simOptions(settings: WorldSettings, choices?: Choices): ChoosingOptions {
  return {
    ...(settings.limit !== undefined ? { limit: settings.limit } : {}),
    ...(settings.domains !== undefined ? { domains: settings.domains } : {}),
    ...(settings.trace !== undefined ? { trace: settings.trace } : {}),
    ...(choices !== undefined ? { [CHOICES]: choices } : {}),
  };
}

/** @internal Runs `build`'s world once, making `choices`; `prepare` sees the `Sim` first. */
export async function runFollowing(
  build: Build,
  choices: Choices,
  settings: WorldSettings,
  prepare?: (sim: Sim) => void,
): Promise<Outcome> {
  const sim = new Sim(simOptions(settings, choices));
  prepare?.(sim);
  await build(sim);
  try {
    return { sim, ok: true, value: await sim.run() };
  } catch (error) {
    return { sim, ok: false, error };
  }
}

/**
 * @internal What tells one failure from another, for "fails the same way":
 * the error's name and where it was made (the first frame of its stack),
 * then the same of its cause. Not its message, which names values and
 * times that a smaller run changes.
 */
export function failureKind(error: unknown): string {
  if (!(error instanceof Error)) return `${typeof error} ${String(error)}`;
  const frame = (error.stack ?? "").split("\n").find((line) => /^\s+at /.test(line)) ?? "";
  const cause = (error as { cause?: unknown }).cause;
  return `${error.name} ${frame.trim()}${cause !== undefined ? ` < ${failureKind(cause)}` : ""}`;
}
