import { run } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { dinner, type Meal } from "../../src/philosophers/table.js";
import { runProgram } from "../support/processes.js";

/** Philosophers `a` and `b` share a fork. */
const neighbours = (a: number, b: number): boolean => Math.abs(a - b) === 1 || Math.abs(a - b) === 4;
const overlap = (x: Meal, y: Meal): boolean => x.start < y.end && y.start < x.end;

describe("the dining philosophers", () => {
  it.each([1, 2, 3])("seed %i: neighbours never eat at once, everybody eats, the forks are put down", async (seed) => {
    const lines: string[] = [];
    const t0 = performance.now();
    const { meals, forks } = await run(function* () {
      return yield* dinner(1, { unit: 0.01, seed, print: (l) => lines.push(l) });
    });
    const elapsed = performance.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(990);
    expect(elapsed).toBeLessThan(2000); // cancelled when the time is up, not at the end of a meal
    for (const x of meals) for (const y of meals) if (x !== y && neighbours(x.uid, y.uid)) expect(overlap(x, y)).toBe(false);
    for (const uid of [1, 2, 3, 4, 5]) expect(meals.filter((m) => m.uid === uid).length).toBeGreaterThan(0);
    for (const fork of forks) expect(fork.isLocked).toBe(false);
    for (const line of lines) expect(line).toMatch(/^0[1-5] (thinks [2-7]s|is hungry|eats [2-7]s)$/);
  });

  it("node dist/philosophers.js 1 --unit 0.01 --seed 7", async () => {
    const r = await runProgram("philosophers.js", ["1", "--unit", "0.01", "--seed", "7"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^01 thinks \ds$/m);
    expect(r.stdout).toMatch(/time is up: meals 01×\d+ 02×\d+ 03×\d+ 04×\d+ 05×\d+ \(seed 7\)/);
  });
});
