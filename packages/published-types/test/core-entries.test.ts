/**
 * `@bobbin/core` exports what a program uses; what runtimes, backends and
 * packages built on core need besides is `@bobbin/core/lowlevel`'s. The two
 * entries share their declarations (one `Task`, one `Operation`) in the
 * bundler's chunks, and what a program's import reads — the main entry's
 * `.d.ts` and the chunks it imports — names none of the low-level API but
 * `select`'s case protocol (`SelectCase`, `Choice`), which `select`'s and
 * `timeout`'s types are made of.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { closure, references } from "./support/identifiers.js";
import { publishedPackages } from "./support/packages.js";

/** What `@bobbin/core/lowlevel` holds and `@bobbin/core` must not export. */
const LOWLEVEL = [
  "Events",
  "Signal",
  "Uid",
  "Syscall",
  "syscall",
  "suspend",
  "signal",
  "uid",
  "defineEvents",
  "Suspender",
  "Trigger",
  "done",
  "interrupt",
  "registerInterrupter",
  "park",
  "unpark",
  "SelectCase",
  "Choice",
  "SchedulingPolicy",
  "RandomSource",
  "Tracer",
  "Hook",
  "HookKey",
  "onSpawn",
  "SpawnHook",
  "onExit",
  "ExitHook",
  "Ending",
  "givable",
  "spawnSystem",
  "describe",
  "runKernel",
  "runOptionNames",
  "kernelSeamNames",
  "runDefaults",
  "maxDomains",
  "RunDefaults",
  "checkRunOptionNames",
  "KernelRunOptions",
  "currentEvents",
  "giveContext",
  "keepShapes",
  "abandon",
];

/** The low-level types a program's declarations may name: `select`'s cases are made of them. */
const CASE_PROTOCOL = ["SelectCase", "Choice"];

/** Names 0.1's main entry exported and no entry exports any more: one name per thing. */
const GONE = ["await", "yield"];

/** The names a declaration file exports, as a consumer's compiler sees them. */
function exportsOf(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  if (symbol === undefined) throw new Error(`${file} is not a module`);
  return checker.getExportsOfModule(symbol).map((s) => s.name);
}

const core = publishedPackages().find((pkg) => pkg.name === "@bobbin/core");
if (core === undefined) throw new Error("@bobbin/core is not a published package of this workspace");
const main = exportsOf(join(core.dir, "dist/index.d.ts"));
/** What a program's import of `@bobbin/core` reads: every name its declarations and their chunks declare or refer to. */
const mainNames = new Set([...closure(join(core.dir, "dist/index.d.ts"))].flatMap((file) => [...references(readFileSync(file, "utf8"))]));
const lowlevel = exportsOf(join(core.dir, "dist/lowlevel/index.d.ts"));

describe("@bobbin/core: a program's entry and the low-level one", () => {
  it("the main entry exports none of the low-level names", () => {
    expect(main.length, "dist/index.d.ts exports nothing: build core first (pnpm build)").toBeGreaterThan(50);
    expect(
      LOWLEVEL.filter((name) => main.includes(name)),
      "these belong to @bobbin/core/lowlevel, not to what a program imports",
    ).toEqual([]);
  });

  it("the main entry's declarations, and the chunks they import, name none of them (but select's case protocol)", () => {
    expect(mainNames.has("Task"), "no Task in dist/index.d.ts and its chunks: build core first (pnpm build)").toBe(true);
    expect(
      LOWLEVEL.filter((name) => mainNames.has(name) && !CASE_PROTOCOL.includes(name)),
      "a program's declarations reach these runtime-author names: move their declaration out of the modules the main entry's types import",
    ).toEqual([]);
  });

  it("the low-level entry exports every one of them", () => {
    expect(LOWLEVEL.filter((name) => !lowlevel.includes(name))).toEqual([]);
  });

  it("the two entries export no name twice, and the aliases are gone", () => {
    expect(lowlevel.filter((name) => main.includes(name))).toEqual([]);
    expect(GONE.filter((name) => main.includes(name) || lowlevel.includes(name))).toEqual([]);
  });
});
