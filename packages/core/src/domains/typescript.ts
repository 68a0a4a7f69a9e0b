/**
 * TypeScript run directly, in worker domains. A program started with tsx
 * (`tsx main.ts`, `node --import tsx main.ts`) has tsx's loader in its main
 * thread only: on Node 20 tsx registers its hooks in the main thread alone,
 * so a worker that imports a `.ts` task module fails with "Unknown file
 * extension". Workers inherit the main thread's `--import`, which finds tsx;
 * each worker domain then registers tsx itself (its `tsx/esm/api`), before
 * it loads anything. ts-node's `--loader` needs nothing: Node gives workers
 * the loaders of `--loader`.
 */

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join } from "node:path";
import { pathToFileURL } from "node:url";
import { importModule } from "./loading.js";

/**
 * @internal Where the workers find tsx, when this process runs under it:
 * the URL of the `--import`ed module that is tsx (or of the working
 * directory, for a bare `--import tsx`), else null.
 */
export function tsxLocation(execArgv: readonly string[]): string | null {
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    const spec = arg === "--import" ? execArgv[i + 1] : arg.startsWith("--import=") ? arg.slice("--import=".length) : undefined;
    if (spec === undefined || !/(^|[/\\])tsx([/\\@]|$)/.test(spec)) continue;
    if (spec.startsWith("file:")) return spec;
    if (isAbsolute(spec)) return pathToFileURL(spec).href;
    return pathToFileURL(join(process.cwd(), "package.json")).href; // a bare specifier: resolved from the working directory
  }
  return null;
}

/** @internal Registers tsx's loader in this worker thread (see the file comment). */
export async function registerTsx(location: string): Promise<void> {
  // The ESM build of tsx/esm/api, as its package's exports name it (require.resolve would give the CommonJS one).
  const manifest = createRequire(location).resolve("tsx/package.json");
  const { exports } = JSON.parse(readFileSync(manifest, "utf8")) as { exports: Record<string, { import: { default: string } }> };
  const api = pathToFileURL(join(dirname(manifest), exports["./esm/api"]!.import.default)).href;
  const { register } = (await importModule(api)) as { register: () => unknown };
  register();
}
