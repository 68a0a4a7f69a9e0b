import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { identifiers } from "./support/identifiers.js";
import { publishedPackages } from "./support/packages.js";

/** The engine's types, which no public declaration may name. */
const ENGINE = [
  "Scheduler",
  "Kernel",
  "Loop",
  "DomainLink",
  "DomainHost",
  "DomainPool",
  "TakeOp",
  "SingleShot",
  "Waiter",
  "RunQueue",
  "ProtectFrame",
  "WorkerSetup",
];

/** Members of `Task` that belong to the kernel (the task record's fields), past and present. */
const TASK_INTERNALS = ["gen", "flags", "value", "family", "outcome", "resume", "waiter", "firstChild", "nextSibling", "extra", "sched"];

/** The member names of the class `name` declared in a declaration file. */
function classMembers(file: string, name: string): string[] | undefined {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const declaration = source.statements.find(
    (node): node is ts.ClassDeclaration => ts.isClassDeclaration(node) && node.name?.text === name,
  );
  return declaration?.members.flatMap((member) => (member.name === undefined ? [] : [member.name.getText(source)]));
}

describe.each(publishedPackages())("$name's published declarations", ({ name, declarations }) => {
  it("exist (the package is built)", () => {
    expect(declarations.length, `${name}: build it first (pnpm build)`).toBeGreaterThan(0);
  });

  it("carry nothing tagged @internal", () => {
    for (const file of declarations) expect(readFileSync(file, "utf8"), file).not.toContain("@internal");
  });

  it("name none of the engine's types", () => {
    for (const file of declarations) {
      const named = ENGINE.filter((internal) => identifiers(readFileSync(file, "utf8")).has(internal));
      expect(named, file).toEqual([]);
    }
  });
});

describe("@bobbin/core's published Task", () => {
  it("shows its public members only", () => {
    const core = publishedPackages().find((pkg) => pkg.name === "@bobbin/core")!;
    // The declaration is in the chunk both of core's entries import.
    const members = core.declarations.map((file) => classMembers(file, "Task")).find((found) => found !== undefined);
    expect(members, "class Task is declared in none of core's declaration files").toBeDefined();
    expect(members).toEqual(expect.arrayContaining(["uid", "parent", "status"]));
    expect(members!.filter((member) => TASK_INTERNALS.includes(member))).toEqual([]);
    // Editors offer every member with a name: the type-only result marker has none (a `unique symbol` key).
    expect(members!.filter((member) => member.startsWith("__"))).toEqual([]);
  });
});
