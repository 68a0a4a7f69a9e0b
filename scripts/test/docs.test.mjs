// `pnpm run docs`' pieces: which entry points the reference covers, and the rule that every
// export has a summary and an `@example`.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Application, LogLevel } from "typedoc";
import { undocumentedExports } from "../docs/check.mjs";
import { entryPoints } from "../docs/entry-points.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

describe("entryPoints", () => {
  it("lists every typed export of every public package of the workspace, from its sources", () => {
    const names = entryPoints(root).map((e) => e.name);
    assert.ok(names.includes("@bobbin/core") && names.includes("@bobbin/unix/conformance"), names.join());
    assert.ok(!names.includes("@bobbin/examples"), "a private package has no reference");
    assert.ok(!names.some((n) => n.endsWith("/worker")), "core's worker entry has no types, so no page");
    const unix = entryPoints(root).find((e) => e.name === "@bobbin/unix/conformance");
    assert.equal(unix.source, join(root, "packages/unix/src/conformance/index.ts"));
  });

  it("reads types under any conditions, and refuses an export whose source is missing", () => {
    const repo = mkdtempSync(join(tmpdir(), "docs-entries-"));
    try {
      const pkg = (dir, json) => {
        mkdirSync(join(repo, "packages", dir, "src"), { recursive: true });
        writeFileSync(join(repo, "packages", dir, "package.json"), JSON.stringify(json));
        writeFileSync(join(repo, "packages", dir, "src/index.ts"), "export const x = 1;\n");
      };
      pkg("a", { name: "@x/a", exports: { ".": { import: { types: "./dist/index.d.ts" }, require: { types: "./dist/index.d.cts" } } } });
      pkg("b", { name: "@x/b", private: true, exports: { ".": { types: "./dist/index.d.ts" } } });
      assert.deepEqual(
        entryPoints(repo).map((e) => e.name),
        ["@x/a"],
      );
      pkg("c", { name: "@x/c", exports: { "./extra": { types: "./dist/extra.d.ts" } } });
      assert.throws(
        () => entryPoints(repo),
        /@x\/c exports \.\/extra with types \.\/dist\/extra\.d\.ts, but .*src\/extra\.ts does not exist/,
      );
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

describe("undocumentedExports", () => {
  it("names every export and namespace member lacking a summary or an @example, and every function lacking @throws", {
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "docs-check-"));
    try {
      writeFileSync(
        join(dir, "ns.ts"),
        [
          "/**",
          " * Documented.",
          " * @example",
          " * ```ts",
          " * inner();",
          " * ```",
          " * @throws nothing",
          " */",
          "export function inner() {}",
          "export const bare = 1;",
          "",
        ].join("\n"),
      );
      writeFileSync(
        join(dir, "index.ts"),
        [
          "/**",
          " * Has both.",
          " * @example",
          " * ```ts",
          " * good(1);",
          " * ```",
          " * @throws RangeError for a negative n",
          " */",
          "export function good(n: number) { return n; }",
          "/**",
          " * Says nothing of what it throws.",
          " * @example",
          " * ```ts",
          " * silent();",
          " * ```",
          " */",
          "export function silent() {}",
          "/** A summary only. */",
          "export interface NoExample { x: number }",
          "/**",
          " * @example",
          " * ```ts",
          " * const t: NoSummary = 1;",
          " * ```",
          " */",
          "export type NoSummary = number;",
          "export class Nothing {}",
          "/**",
          " * A namespace.",
          " * @example",
          " * ```ts",
          " * ns.inner();",
          " * ```",
          " */",
          'export * as ns from "./ns.js";',
          'export { good as alias } from "./index.js";',
          "",
        ].join("\n"),
      );
      writeFileSync(
        join(dir, "tsconfig.json"),
        JSON.stringify({ compilerOptions: { strict: true, module: "NodeNext", moduleResolution: "NodeNext" }, include: ["*.ts"] }),
      );
      const app = await Application.bootstrapWithPlugins({
        entryPoints: [join(dir, "index.ts")],
        tsconfig: join(dir, "tsconfig.json"),
        logLevel: LogLevel.Error,
      });
      const project = await app.convert();
      assert.deepEqual(undocumentedExports(project).sort(), [
        `${project.name}: NoExample — no @example`,
        `${project.name}: NoSummary — no summary`,
        `${project.name}: Nothing — no summary, no @example`,
        `${project.name}: ns.bare — no summary, no @example`,
        `${project.name}: silent — no @throws`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
