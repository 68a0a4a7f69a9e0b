// The user's project the blocks are compiled in: a folder of its own (git-ignored) whose
// node_modules/@bobbin/* link to the workspace's packages, so that `@bobbin/core` resolves
// as it does for a user, through the package's `exports` to its built dist/. Anything
// else a block imports (typescript-eslint, @types/node) resolves from the repository root.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/** The compiler options of a user's strict project on Node (ESM). */
export const compilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2022.d.ts", "lib.esnext.disposable.d.ts"],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  allowJs: true,
  checkJs: true,
  skipLibCheck: true,
  types: ["node"],
  noEmitOnError: false,
};

/** The workspace's published packages: directory name and package name. */
export function publicPackages(root) {
  return readdirSync(join(root, "packages"))
    .map((dir) => ({ dir, json: JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")) }))
    .filter(({ json }) => json.private !== true)
    .map(({ dir, json }) => ({ dir, name: json.name }));
}

/** Where the helpers the preludes may import are, once copied into the project. */
export const helpersModule = "src/helpers.ts";
/** The examples' in-memory self-signed certificate, which the helpers' TLS server uses. */
const selfSigned = "packages/examples/src/support/self-signed.ts";

/** Lays out the project afresh in `dir`: package.json, node_modules links, src/ with the helpers. */
export function makeProject(root, dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "src"), { recursive: true });
  copyFileSync(new URL("./helpers.ts", import.meta.url), join(dir, helpersModule));
  copyFileSync(new URL(`../../${selfSigned}`, import.meta.url), join(dir, "src/self-signed.ts"));
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ private: true, type: "module" }, null, 2)}\n`);
  for (const { dir: pkg, name } of publicPackages(root)) {
    const link = join(dir, "node_modules", name);
    mkdirSync(join(link, ".."), { recursive: true });
    symlinkSync(relative(join(link, ".."), join(root, "packages", pkg)), link, "dir");
  }
}

/**
 * Type-checks every module and emits the JavaScript of those that compile.
 * @param {string} dir the project
 * @param {string[]} files the modules, absolute paths under dir/src
 * @returns {Map<string, ts.Diagnostic[]>} the errors of each file (files without any are absent)
 */
export function compile(dir, files) {
  const options = { ...compilerOptions, rootDir: join(dir, "src"), outDir: join(dir, "out") };
  const program = ts.createProgram(files, options);
  const errors = new Map();
  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  if (global.length > 0) throw new Error(ts.formatDiagnostics(global, formatHost));
  for (const file of files) {
    const source = program.getSourceFile(file);
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    if (diagnostics.length > 0) errors.set(file, diagnostics);
  }
  program.emit();
  return errors;
}

const formatHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => process.cwd(),
  getNewLine: () => "\n",
};

/** A diagnostic's message, one line. */
export function messageOf(diagnostic) {
  return ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n").split("\n").join(" ");
}

/** The 0-based line of a diagnostic in its file. */
export function lineOf(diagnostic) {
  return diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line : 0;
}
