/**
 * `@bobbin/sim/vitest`: a simulation as a vitest test. Kept apart from the
 * main entry, so that `@bobbin/sim` never imports vitest (an optional peer
 * dependency, needed only by this entry).
 *
 * @example
 * ```ts
 * import { simTest } from "@bobbin/sim/vitest";
 * simTest("the bank never goes below zero", bankWorld, { runs: 200, seed: 1 });
 * ```
 * @packageDocumentation
 */
import { type Build, CheckFailed, type CheckOptions, type CheckReport, check } from "@bobbin/sim";
import { test } from "vitest";

/**
 * Options of {@link simTest}: `check`'s, and the test's timeout.
 *
 * @example
 * ```ts
 * simTest("survives crashes", build, { runs: 500, seed: 7, timeout: 60_000 });
 * ```
 */
export interface SimTestOptions extends CheckOptions {
  /** The test's timeout in ms (default: vitest's). */
  readonly timeout?: number | undefined;
}

/**
 * A vitest test that runs `check(build, options)`: it passes when every run
 * passes; when one fails, it prints the line that replays the (shrunk)
 * failure — `replay(build, "schedule=…")` — and fails with `CheckFailed`.
 * Give a `seed` so that the test checks the same runs each time.
 *
 * @example
 * ```ts
 * import { simTest } from "@bobbin/sim/vitest";
 * simTest("the register stays linearizable", registerWorld(), { runs: 50, seed: 5 });
 * ```
 * @throws TypeError (when the test runs) for what `check` refuses.
 */
export function simTest(name: string, build: Build, options: SimTestOptions = {}): void {
  const { timeout, ...rest } = options;
  test(name, () => runSimTest(name, build, rest).then(() => undefined), timeout);
}

/** @internal The body of a {@link simTest}: `check`, and the replay line printed when it fails. */
export async function runSimTest(name: string, build: Build, options: CheckOptions): Promise<CheckReport> {
  try {
    return await check(build, options);
  } catch (error) {
    if (error instanceof CheckFailed)
      console.error(`${name}: ${error.message.split("\n")[0]}\n  replay it with: replay(build, ${JSON.stringify(error.repro)})`);
    throw error;
  }
}
