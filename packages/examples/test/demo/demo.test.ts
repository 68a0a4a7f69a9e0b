import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { dist, runProgram } from "../support/processes.js";
import { backends } from "../support/servers.js";

const names = (await backends()).map(([name]) => name);

/** Runs the demo with a small load and the given backend. */
function demo(backend: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [dist("demo.js"), "--connections", "300", "--concurrency", "10", "--round-trips", "20"], {
      env: { ...process.env, BOBBIN_BACKEND: backend },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("pnpm demo", () => {
  it.each(names)("on the %s backend: serves, verifies, stops on SIGINT, releases every fd", async (name) => {
    const r = await demo(name);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`backend: ${name}`);
    expect(r.stdout).toMatch(/client done: 300 connections, 6,000 round trips verified in [\d.]+ s: [\d,]+ round trips\/s/);
    expect(r.stdout).toMatch(/server stopped \(exit code 0\): 300 connections served, 384,000 bytes echoed/);
    // Every domain served: dom0 and the worker domains, all accepting on dom0's socket.
    const [, workers] = r.stdout.match(/dom0 \+ (\d+) worker domain/)!;
    const served = [...r.stdout.matchAll(/^ {2}domain (\d+): ([\d,]+) connections/gm)].map((m) => Number(m[2]!.replace(/,/g, "")));
    expect(served).toHaveLength(Number(workers) + 1);
    for (const n of served) expect(n).toBeGreaterThan(0);
    expect(r.stdout).toMatch(/no socket left open/);
    expect(r.stdout).toMatch(/^ok: every connection served and every byte echoed once, by all \d+ domains; no fd left open$/m);
  });

  it("rejects a bad option", async () => {
    const r = await runProgram("demo.js", ["--size", "4"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/--size must be an integer ≥ 8/);
  });
});
