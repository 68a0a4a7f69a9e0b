/**
 * Worker domains and the program's own modules, in child processes against
 * the built package: a parallel task defined in the entry module that calls
 * `run`, TypeScript run with tsx, a program bundled with esbuild.
 */
import { rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { CORE_URL, runNode, scratchProject } from "./support/processes.js";

const require = createRequire(import.meta.url);
const CORE_PATH = fileURLToPath(CORE_URL);
const dirs: string[] = [];

async function project(files: Record<string, string>): Promise<string> {
  const dir = await scratchProject(files);
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** An entry module that defines its parallel task and calls run itself (with `domains: 2`). */
const SAME_FILE_ENTRY = `
import { threadId } from "node:worker_threads";
import * as B from ${JSON.stringify(CORE_URL)};
console.log("evaluated in thread " + threadId);
export const square = B.defineTask(import.meta.url, "square", function* (n) { return n * n; });
const results = await B.run(function* () { return yield* B.parallel(square, [1, 2, 3, 4]); }, { domains: 2 });
console.log("results " + JSON.stringify(results.map((r) => (r.ok ? r.value : String(r.error)))));
`;

describe("a parallel task defined in the entry module that calls run", () => {
  it("works: each worker imports the entry once, its run does nothing there, and no more workers start", async () => {
    const dir = await project({ "main.mjs": SAME_FILE_ENTRY });
    const r = await runNode(["main.mjs"], { cwd: dir });
    expect(r.stderr).toBe("");
    const lines = r.stdout.trim().split("\n");
    // dom0 (thread 0) and the two worker domains: nothing else evaluated the entry.
    expect(lines.filter((l) => l.startsWith("evaluated in thread")).sort()).toEqual([
      "evaluated in thread 0",
      "evaluated in thread 1",
      "evaluated in thread 2",
    ]);
    // A hang is killed (runNode's timeout): no results, and not a clean exit.
    expect(lines).toContain("results [1,4,9,16]");
    expect(r.code).toBe(0);
  });

  it("a task defined only after an awaited run fails with an error that says why, instead of waiting forever", async () => {
    // dom0 gets the task from a helper module; the worker, told to find it in the entry, stalls on the entry's run.
    const dir = await project({
      "main.mjs": `
        import * as B from ${JSON.stringify(CORE_URL)};
        import { threadId } from "node:worker_threads";
        if (threadId === 0) {
          const late = B.defineTask(import.meta.url, "late", function* () { return 1; });
          const r = await B.run(function* () { return yield* B.awaitTask(B.call(late)); }, { domains: 1 });
          console.log(r.ok ? "resolved?!" : r.error.message);
        } else {
          await B.run(function* () {});
          B.defineTask(import.meta.url, "late", function* () { return 1; });
        }
      `,
    });
    const r = await runNode(["main.mjs"], { cwd: dir });
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toContain('to find the parallel task "late", but that module awaits run() at its top level before defining it');
    expect(lines[0]).toContain("define parallel tasks above the call of run(), or better, in a module of their own");
    // The run ended by itself: a load that waited for good would hang it until runNode's timeout kills it.
    expect(r.code).toBe(0);
  });
});

// TypeScript sources import core by its path (esbuild resolves paths, not file: URLs).
const TS_TASKS = `
import * as B from ${JSON.stringify(CORE_PATH)};
export const double = B.defineTask(import.meta.url, "double", function* (n: number): Generator<B.Instruction, number> {
  return n * 2;
});
`;

/** Whether this Node can strip TypeScript's types itself (22.6 and later; not Node 20). */
const STRIPPING = process.allowedNodeEnvironmentFlags.has("--experimental-strip-types");

const TS_MAIN = `
import * as B from ${JSON.stringify(CORE_PATH)};
import { double } from "./tasks.ts";
const results = await B.run(function* () { return yield* B.parallel(double, [1, 2, 3]); }, { domains: 2 });
console.log(JSON.stringify(results.map((r) => (r.ok ? r.value : String(r.error)))));
`;

describe("TypeScript run directly", () => {
  it("under tsx, worker domains load .ts task modules (Bobbin registers tsx in each worker)", async () => {
    const dir = await project({ "tasks.ts": TS_TASKS, "main.ts": TS_MAIN });
    const tsxCli = join(require.resolve("tsx/package.json"), "..", "dist", "cli.mjs");
    const r = await runNode([tsxCli, "main.ts"], { cwd: dir, timeoutMs: 30_000 });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("[2,4,6]");
  });

  it("without a TypeScript loader in the workers, the call fails with an error that says what to configure", async () => {
    // dom0 defines a task whose module is a .ts file; plain node workers cannot
    // import it (where Node strips types itself, with that turned off).
    const dir = await project({
      "tasks.ts": TS_TASKS,
      "main.mjs": `
        import * as B from ${JSON.stringify(CORE_URL)};
        const double = B.defineTask(new URL("./tasks.ts", import.meta.url).href, "double", function* (n) { return n * 2; });
        const r = await B.run(function* () { return yield* B.awaitTask(B.call(double, 1)); }, { domains: 1 });
        console.log(r.ok ? "resolved?!" : r.error.message);
      `,
    });
    const r = await runNode([...(STRIPPING ? ["--no-experimental-strip-types"] : []), "main.mjs"], { cwd: dir });
    expect(r.stdout).toContain("a worker domain cannot load the TypeScript module");
    expect(r.stdout).toContain("Run the program on a Node that strips types itself (22.18 and later");
    expect(r.stdout).toContain("or with tsx (tsx main.ts, or node --import tsx main.ts");
  });

  it("where Node strips types itself (22.6 and later), worker domains load .ts task modules; Node 20 cannot run main.ts", async () => {
    const dir = await project({ "tasks.ts": TS_TASKS, "main.ts": TS_MAIN });
    // On by default from 22.18 (and 23.6); the flag turns it on from 22.6.
    const r = await runNode([...(STRIPPING ? ["--experimental-strip-types"] : []), "main.ts"], { cwd: dir, timeoutMs: 30_000 });
    if (STRIPPING) {
      expect(r.stdout.trim()).toBe("[2,4,6]");
      expect(r.code).toBe(0);
    } else {
      expect(r.stderr).toContain("ERR_UNKNOWN_FILE_EXTENSION");
      expect(r.code).not.toBe(0);
    }
  });
});

describe("a program bundled with esbuild", () => {
  const esbuild = (dir: string, args: string[]) =>
    runNode(args, { cwd: dir, executable: join(require.resolve("esbuild/package.json"), "..", "bin", "esbuild"), timeoutMs: 30_000 });
  const workerEntry = fileURLToPath(new URL("../dist-dev/worker.js", import.meta.url));

  it("into one file: call fails with NoDomainAvailable saying how to bundle (no crash of the process)", async () => {
    const main = `
      import * as B from ${JSON.stringify(CORE_PATH)};
      import { double } from "./tasks.ts";
      try {
        await B.run(function* () { return yield* B.parallel(double, [1]); }, { domains: 1 });
      } catch (e) { console.log(e.name + ": " + e.message); }
    `;
    const dir = await project({ "tasks.ts": TS_TASKS, "main.ts": main });
    const built = await esbuild(dir, ["main.ts", "--bundle", "--format=esm", "--platform=node", "--outfile=out/main.js"]);
    expect(built.stderr).not.toContain("ERROR");
    expect(built.code).toBe(0);
    const r = await runNode([join("out", "main.js")], { cwd: dir });
    expect(r.stdout.trim()).toContain("NoDomainAvailable: no domain is available for a parallel task: the worker entry of @bobbin/core");
    expect(r.stdout).toContain("Bundle @bobbin/core/worker as a second entry point beside the program");
  });

  it("with the README's recipe (the worker entry beside it, core shared): workers work", async () => {
    const dir = await project({ "tasks.ts": TS_TASKS, "main.ts": TS_MAIN });
    const built = await esbuild(dir, [
      "main.ts",
      workerEntry,
      "--bundle",
      "--splitting",
      "--format=esm",
      "--platform=node",
      "--entry-names=[name]",
      "--outdir=out",
    ]);
    expect(built.stderr).not.toContain("ERROR");
    expect(built.code).toBe(0);
    const r = await runNode([join("out", "main.js")], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("[2,4,6]");
  });
});
