// Node loads its fetch (undici) at a thread's first fetch: a synchronous load of tens of ms,
// which a run's blockingMs report names as such (not the task that fetched, nor its CPU loops).
// It runs in a child process: only a fresh one has not loaded Node's fetch yet.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const PROGRAM = fileURLToPath(new URL("./fixtures/first-fetch.mjs", import.meta.url));
const BUILT = fileURLToPath(new URL("../dist/index.js", import.meta.url));

describe("a process's first fetch", () => {
  it("loads Node's fetch in a step of a task named for it, which a blocking report names", async () => {
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run \`pnpm build\` (pnpm test builds first)`);
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile(process.execPath, [PROGRAM], { timeout: 15_000 }, (error, stdout, stderr) =>
        error ? reject(error) : resolve({ stdout, stderr }),
      ),
    );
    const { text, reports } = JSON.parse(stdout) as { text: string; reports: { task: string; ms: number }[] };
    expect(text).toBe("ok");
    const loading = "loading Node's fetch (undici, once per thread)";
    // Loading undici's bundle takes well over the 1 ms threshold on any machine.
    expect(reports.filter((r) => r.task === loading)).toHaveLength(1);
    expect(stderr).toContain(`[BOBBIN_BLOCKING] Warning: ${loading}#`);
  });
});
