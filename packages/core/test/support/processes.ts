/** Helpers for tests that run a script in a child process. */
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A JavaScript expression listing the process's live handles and requests,
 * less those of its own stdio (pipes to the test), to check nothing leaked.
 */
export const LIVE_HANDLES =
  'process.getActiveResourcesInfo().filter((r) => !["PipeWrap", "TTYWrap", "CloseReq", "WriteWrap", "ShutdownWrap"].includes(r))';

/** How a child process ended. */
export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node …args` (or another executable) in `cwd`, killed after `timeoutMs`; never rejects. */
export function runNode(args: readonly string[], options: { cwd?: string; timeoutMs?: number; executable?: string } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      options.executable ?? process.execPath,
      args,
      { cwd: options.cwd, timeout: options.timeoutMs ?? 15_000 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A fresh temporary directory holding `files` (path → contents), with a package.json of an ES module package. */
export async function scratchProject(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "bobbin-core-"));
  await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
  for (const [path, text] of Object.entries(files)) await writeFile(join(dir, path), text);
  return dir;
}

/** The entry of the package's development build (the built package with the kernel's checks), as a URL scripts import (turbo builds it before the tests). */
export const CORE_URL = new URL("../../dist-dev/index.js", import.meta.url).href;
