/**
 * Every run settles, every time in a process: deadlocked and successful runs
 * one after another, in every order, awaited at the top level of a module or
 * in a plain async function. Each sequence runs in a child process against
 * the built package (`fixtures/run-sequence.mjs`).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runNode } from "../support/processes.js";

const PROGRAM = fileURLToPath(new URL("../fixtures/run-sequence.mjs", import.meta.url));

/**
 * Every sequence of three runs, each deadlocked (on a trigger, a promise or
 * an event, by position) or successful (at once, or after a timer that
 * makes Node's loop turn, by position).
 */
const SEQUENCES = ["ddd", "dds", "dsd", "dss", "sdd", "sds", "ssd", "sss"].map((shape) =>
  [...shape].map((c, i) => (c === "s" ? "ws"[i % 2] : "tpo"[i % 3])).join(""),
);

/** What the program prints for a sequence: how each run settled, then `end` (the code after the last run ran). */
function expected(letters: string): string[] {
  return [...[...letters].map((c, i) => `${i} ${"sw".includes(c) ? "ok" : "Deadlock"}`), "end"];
}

describe.each(["top", "function"])("runs awaited %s-level, one after another in a process", (mode) => {
  it.each(SEQUENCES)("%s: each deadlocked run rejects with Deadlock, the process goes on and exits with 0", async (letters) => {
    const r = await runNode([PROGRAM, letters, mode]);
    expect(r.stdout.trim().split("\n")).toEqual(expected(letters));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("a longer sequence of deadlocks and successes, each kind twice", async () => {
    const letters = "tpwostswpo";
    const r = await runNode([PROGRAM, letters, mode]);
    expect(r.stdout.trim().split("\n")).toEqual(expected(letters));
    expect(r.code).toBe(0);
  });
});
