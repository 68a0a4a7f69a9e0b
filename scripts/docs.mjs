#!/usr/bin/env node
// `pnpm run docs`: the API reference. TypeDoc reads every public entry point of every published
// package (each `exports` entry with types, from its sources) in one program, so that the
// packages' pages link to each other, and writes HTML into docs/api/ (git-ignored), one
// module page per entry point, named after it (`@bobbin/unix/conformance`). Then it checks
// that every export has a summary and an `@example` (and every function `@throws`), and fails
// naming those that lack one.
//
//   node scripts/docs.mjs [--out=<dir>]
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Application, LogLevel } from "typedoc";
import { undocumentedExports } from "./docs/check.mjs";
import { entryPoints } from "./docs/entry-points.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({ options: { out: { type: "string" } } });
const out = resolve(args.out ?? join(root, "docs/api"));

const entries = entryPoints(root);
const app = await Application.bootstrapWithPlugins({
  name: "Bobbin",
  entryPoints: entries.map((e) => e.source),
  entryPointStrategy: "resolve",
  tsconfig: join(root, "scripts/docs/tsconfig.json"),
  // Packages import each other by name: resolve those names to the sources read here.
  compilerOptions: { baseUrl: root, paths: Object.fromEntries(entries.map((e) => [e.name, [e.source]])) },
  out,
  readme: "none",
  excludeInternal: true,
  excludePrivate: true,
  // Members inherited from Node's classes (`Request` is an `http.IncomingMessage`) link to Node's
  // own pages by relative paths that do not exist here; Node documents them.
  excludeExternals: true,
  githubPages: false,
  logLevel: LogLevel.Warn,
});

const project = await app.convert();
if (!project) throw new Error("TypeDoc could not read the packages (its errors are above)");
// A module is named after its entry point (`@bobbin/unix/conformance`), not its folder (`unix/src/conformance`).
for (const module of project.children ?? []) {
  const file = resolve(root, module.sources?.[0]?.fullFileName ?? "");
  const entry = entries.find((e) => e.source === file);
  if (!entry) throw new Error(`TypeDoc made a module "${module.name}" that is no entry point`);
  module.name = entry.name;
}
await app.generateDocs(project, out);
const problems = undocumentedExports(project);
console.log(`API reference: ${entries.map((e) => e.name).join(", ")} → ${relative(process.cwd(), out)}/index.html`);
if (problems.length > 0) {
  console.error(
    `\n${problems.length} exports lack a summary, an @example or @throws (TSDoc on every export, with a short @example; @throws on every function):`,
  );
  for (const p of problems) console.error(`  ${p}`);
  process.exitCode = 1;
} else if (app.logger.hasErrors()) {
  process.exitCode = 1;
} else {
  console.log("every export has a summary and an @example, every function @throws");
}
