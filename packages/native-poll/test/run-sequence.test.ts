/**
 * Every run settles, every time in a process, on the native backends:
 * deadlocked runs (a trigger, a channel, a lock cycle) and successful ones
 * one after another, in every order, awaited at the top level of a module or
 * in a plain async function. Each sequence runs in a child process: core's
 * sequence program, with the runs of `@bobbin/unix`'s test of the same name
 * on this package's built backend.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { noUring } from "./helpers.js";

const PROGRAM = fileURLToPath(new URL("../../core/test/fixtures/run-sequence.mjs", import.meta.url));
const RUNS = new URL("../../unix/test/fixtures/runs-on-a-backend.mjs", import.meta.url).href;
const BUILT = new URL("../dist/index.js", import.meta.url).href;

/** Every sequence of three runs: each deadlocked (on a lock cycle, a channel or a trigger, by position) or successful (at once or after a sleep). */
const SEQUENCES = ["ddd", "dds", "dsd", "dss", "sdd", "sds", "ssd", "sss"].map((shape) =>
  [...shape].map((c, i) => (c === "s" ? "ws"[i % 2] : "lct"[i % 3])).join(""),
);

function runSequence(letters: string, mode: string, backend: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [PROGRAM, letters, mode, RUNS, BUILT, backend], { timeout: 15_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const cases = ["top", "function"].flatMap((mode) => SEQUENCES.map((letters) => ({ mode, letters })));

describe.each([
  { backend: "nativeBackend", skip: "" },
  { backend: "uringBackend", skip: noUring },
])("$backend: runs one after another in a process", ({ backend, skip }) => {
  it.skipIf(skip !== "").each(cases)(
    `$letters awaited $mode-level: each deadlocked run rejects with Deadlock, the process exits with 0${skip}`,
    async ({ mode, letters }) => {
      const r = await runSequence(letters, mode, backend);
      const expected = [...[...letters].map((c, i) => `${i} ${"sw".includes(c) ? "ok" : "Deadlock"}`), "end"];
      expect(r.stdout.trim().split("\n")).toEqual(expected);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
    },
  );
});
