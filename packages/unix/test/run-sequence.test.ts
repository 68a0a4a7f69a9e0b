/**
 * Every run settles, every time in a process, on the libuv backend:
 * deadlocked runs (a lock cycle, a channel, a trigger) and successful ones
 * one after another, in every order, awaited at the top level of a module
 * or in a plain async function. Each sequence runs in a child process: core's
 * sequence program, with the runs of `fixtures/runs-on-a-backend.mjs` on the
 * built package.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const PROGRAM = fileURLToPath(new URL("../../core/test/fixtures/run-sequence.mjs", import.meta.url));
const RUNS = new URL("./fixtures/runs-on-a-backend.mjs", import.meta.url).href;

/** Every sequence of three runs: each deadlocked (on a lock cycle, a channel or a trigger, by position) or successful (at once or after a sleep). */
const SEQUENCES = ["ddd", "dds", "dsd", "dss", "sdd", "sds", "ssd", "sss"].map((shape) =>
  [...shape].map((c, i) => (c === "s" ? "ws"[i % 2] : "lct"[i % 3])).join(""),
);

describe.each(["top", "function"])("runs awaited %s-level, one after another in a process (libuv)", (mode) => {
  it.each(SEQUENCES)("%s: each deadlocked run rejects with Deadlock, the process goes on and exits with 0", async (letters) => {
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [PROGRAM, letters, mode, RUNS], { timeout: 15_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(r.stdout.trim().split("\n")).toEqual([...[...letters].map((c, i) => `${i} ${"sw".includes(c) ? "ok" : "Deadlock"}`), "end"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});
