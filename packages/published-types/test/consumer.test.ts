import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { publishedPackages } from "./support/packages.js";

const consumer = fileURLToPath(new URL("../consumer/", import.meta.url));

interface Checked {
  readonly options: ts.CompilerOptions;
  /** Every file the program read. */
  readonly files: readonly string[];
  readonly diagnostics: readonly ts.Diagnostic[];
}

function typeCheckConsumer(): Checked {
  const config = ts.getParsedCommandLineOfConfigFile(join(consumer, "tsconfig.json"), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
    },
  });
  if (config === undefined) throw new Error("consumer/tsconfig.json did not parse");
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  return {
    options: config.options,
    files: program.getSourceFiles().map((file) => file.fileName),
    diagnostics: [...config.errors, ...ts.getPreEmitDiagnostics(program)],
  };
}

const format: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (name) => name,
  getCurrentDirectory: () => consumer,
  getNewLine: () => "\n",
};

describe("a consumer project (strict, skipLibCheck off, NodeNext)", () => {
  let checked: Checked;
  beforeAll(() => {
    checked = typeCheckConsumer();
  });

  it("is configured as a demanding user's project", () => {
    expect(checked.options).toMatchObject({ strict: true, skipLibCheck: false });
    expect(checked.options.module).toBe(ts.ModuleKind.NodeNext);
    expect(checked.options.moduleResolution).toBe(ts.ModuleResolutionKind.NodeNext);
  });

  it("imports every published package, and gets its types from the package's dist/", () => {
    const sources = ["index.ts", "eslint.config.ts"].map((file) => readFileSync(join(consumer, file), "utf8")).join("\n");
    for (const pkg of publishedPackages()) {
      expect(sources, `consumer/ does not import ${pkg.name}`).toContain(`from "${pkg.name}"`);
      expect(pkg.declarations.length, `${pkg.name} has no dist/*.d.ts: build it first (pnpm build)`).toBeGreaterThan(0);
      const read = checked.files.filter((file) => file.startsWith(join(pkg.dir, "dist/")));
      expect(read, `${pkg.name}'s published declarations were not read`).not.toEqual([]);
      expect(
        checked.files.filter((file) => file.startsWith(join(pkg.dir, "src/"))),
        `${pkg.name}'s sources were read`,
      ).toEqual([]);
    }
  });

  it("type-checks: every published declaration, and the program written against them", () => {
    expect(ts.formatDiagnostics(checked.diagnostics, format)).toBe("");
  });
});
