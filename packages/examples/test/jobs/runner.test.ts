import { processGone as gone } from "@bobbin/test-support";
import { run } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { type Job, type JobEvent, runJobs } from "../../src/jobs/runner.js";
import { Program, runProgram } from "../support/processes.js";

/** A job that prints `text` after `ms` and exits with `code`. */
const job = (name: string, ms: number, code: number, text = name): Job => ({
  name,
  command: process.execPath,
  args: ["-e", `setTimeout(() => { console.log(${JSON.stringify(text)}); process.exitCode = ${code}; }, ${ms})`],
});

describe("runJobs", () => {
  it("runs at most `limit` jobs at once, reports their lines, and returns how each ended, in order", async () => {
    const events: JobEvent[] = [];
    let running = 0;
    let most = 0;
    const results = await run(function* () {
      return yield* runJobs([job("a", 150, 0), job("b", 50, 1), job("c", 50, 2), job("d", 10, 0)], {
        limit: 2,
        onEvent: (event) => {
          events.push(event);
          if (event.kind === "started") most = Math.max(most, ++running);
          if (event.kind === "ended") running--;
        },
      });
    });
    expect(most).toBe(2);
    expect(results.map((r) => [r.job.name, r.exit.code])).toEqual([
      ["a", 0],
      ["b", 1],
      ["c", 2],
      ["d", 0],
    ]);
    expect(events.filter((e) => e.kind === "line").map((e) => [e.job.name, e.kind === "line" && e.line])).toContainEqual(["c", "c"]);
    for (const r of results) expect(gone(r.pid)).toBe(true);
  });

  it("a job that cannot start fails the runner; the jobs running are killed", async () => {
    const pids: number[] = [];
    const error = await run(function* () {
      try {
        yield* runJobs([job("long", 30_000, 0), { name: "missing", command: "/nonexistent/bobbin-job", args: [] }], {
          limit: 2,
          onEvent: (e) => e.kind === "started" && pids.push(e.pid),
        });
        return null;
      } catch (e) {
        return e as NodeJS.ErrnoException;
      }
    });
    expect(error?.code).toBe("ENOENT");
    expect(pids.length).toBe(1);
    expect(gone(pids[0]!)).toBe(true);
  });

  it("checks the limit", () => {
    expect(() => runJobs([], { limit: 0 })).toThrow(/an integer ≥ 1/);
  });
});

describe("node dist/job-runner.js", () => {
  it("runs every job, two at a time, and says how each ended", async () => {
    const exit = await runProgram("job-runner.js", ["--jobs", "4", "--limit", "2", "--seconds", "0.1"]);
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/\[job 3\] exit code 0 after/);
    expect(exit.stdout).toMatch(/\[job 2\] exit code 2 after/);
    expect(exit.stdout).toMatch(/4 of 4 job\(s\) finished\n$/);
  });

  it("Ctrl-C (SIGINT) kills the running jobs' processes, starts no more, and exits 130 once they are reaped", async () => {
    const program = Program.start("job-runner.js", ["--jobs", "5", "--limit", "2", "--seconds", "30", "--grace", "1"]);
    try {
      await program.waitFor(/\[job 1\] started, pid (\d+)/);
      await program.waitFor(/\[job 2\] started, pid (\d+)/);
      await program.waitFor(/\[job 2\] pid \d+/); // both run their script
      const pids = [...program.stdout.matchAll(/started, pid (\d+)/g)].map((m) => Number(m[1]));
      expect(pids.length).toBe(2);
      program.child.kill("SIGINT");
      const exit = await program.end();
      expect(exit.code).toBe(130);
      expect(exit.stdout).not.toMatch(/\[job 3\]/);
      expect(exit.stdout).toMatch(/0 of 5 job\(s\) finished\n$/);
      // The runner exited after reaping them: no job process survives it.
      for (const pid of pids) expect(gone(pid), `job process ${pid} is gone`).toBe(true);
    } finally {
      program.kill();
    }
  });
});
