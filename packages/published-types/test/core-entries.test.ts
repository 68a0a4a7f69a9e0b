/**
 * `@bobbin/core` exports what a program uses; what runtimes, backends and
 * packages built on core need besides is `@bobbin/core/lowlevel`'s. The two
 * entries share their declarations (one `Task`, one `Operation`), so the main
 * entry's types may mention a low-level type where `run`'s options or
 * `select`'s cases need it — but the main entry exports none of them.
 */
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
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
  "giveContext",
];

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
const lowlevel = exportsOf(join(core.dir, "dist/lowlevel/index.d.ts"));

describe("@bobbin/core: a program's entry and the low-level one", () => {
  it("the main entry exports none of the low-level names", () => {
    expect(main.length, "dist/index.d.ts exports nothing: build core first (pnpm build)").toBeGreaterThan(50);
    expect(
      LOWLEVEL.filter((name) => main.includes(name)),
      "these belong to @bobbin/core/lowlevel, not to what a program imports",
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
