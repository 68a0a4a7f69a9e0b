#!/usr/bin/env node
// Runs the TypeScript and JavaScript blocks of every README as a user's program would run
// (Rust's doctests, for READMEs): each block is a module of a strict project that imports
// the built packages, type-checked, then run with node where its marker lets it, its
// printed output compared with what the README shows. The markers and the layout of the
// generated modules are described in the root README, "README code blocks".
//
//   node scripts/readme-blocks.mjs [--only=<text>] [--jobs=<n>] [--timeout=<seconds>]
//
// --only keeps the blocks whose `file:line` contains <text>; --jobs is how many blocks run
// at once (default: the machine's cores); --timeout is each block's deadline (default 30 s,
// a block's marker may say more). Needs the packages built (`pnpm build`).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { judge, runNode, schedule } from "./readme-blocks/execute.mjs";
import { extractBlocks, MarkerError } from "./readme-blocks/extract.mjs";
import { moduleOf, planOf } from "./readme-blocks/generate.mjs";
import { compile, helpersModule, lineOf, makeProject, messageOf, publicPackages } from "./readme-blocks/project.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: { only: { type: "string" }, jobs: { type: "string" }, timeout: { type: "string" }, root: { type: "string" } },
});
const repo = args.root ?? root;
const jobs = Number(args.jobs ?? availableParallelism());
const defaultTimeout = Number(args.timeout ?? 30);
const dir = join(repo, ".readme-blocks");

/** The READMEs whose blocks run: the root's, every package's, bench's. */
function readmes() {
  const found = ["README.md", "bench/README.md"];
  for (const pkg of readdirSync(join(repo, "packages"))) found.push(`packages/${pkg}/README.md`);
  return found.filter((f) => existsSync(join(repo, f)));
}

function main() {
  for (const { dir: pkg, name } of publicPackages(repo)) {
    if (!existsSync(join(repo, "packages", pkg, "dist"))) throw new Error(`${name} is not built: run \`pnpm build\` first`);
  }
  const items = [];
  for (const file of readmes()) {
    const blocks = extractBlocks(file, readFileSync(join(repo, file), "utf8"));
    for (const block of blocks) {
      const plan = planOf(block);
      if (args.only !== undefined && !plan.where.includes(args.only)) continue;
      // Each block is a folder of its own: src/<readme>-L<line>/main.ts (or its `as=` path).
      const slug = `${file.replace(/\/?README\.md$/, "").replace(/[^\w]+/g, "-") || "root"}-L${block.line}`;
      const { path, lines, files } = moduleOf(block, blocks, plan);
      const module = path ?? plan.module;
      const src = join(dir, "src", slug, module);
      const out = join(dir, "out", slug, module.replace(/\.[cm]?[jt]sx?$/, ".js"));
      const extra = files.map((f) => ({ path: resolve(dirname(src), f.path), lines: f.lines }));
      items.push({ plan, lines, src, out, extra });
    }
  }
  makeProject(repo, dir);
  const write = (path, lines) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${lines.map((l) => l.text).join("\n")}\n`);
  };
  for (const item of items) {
    write(item.src, item.lines);
    for (const f of item.extra) write(f.path, f.lines);
  }
  const errors = compile(dir, [
    join(dir, helpersModule),
    join(dir, "src/self-signed.ts"),
    ...items.flatMap((i) => [i.src, ...i.extra.map((f) => f.path)]),
  ]);
  return { items, errors };
}

/** A file's type errors, each at the README line it came from. */
function typeErrors(file, diagnostics) {
  return diagnostics.map((d) => {
    const from = file.lines[lineOf(d)]?.from ?? `${relative(repo, file.src ?? file.path)}:${lineOf(d) + 1} (generated)`;
    return `  ${from}: TS${d.code}: ${messageOf(d)}`;
  });
}

async function runAll({ items, errors }) {
  const outcomes = await schedule(
    items.map((item) => ({
      port: item.plan.port,
      start: async () => {
        const diagnostics = [item, ...item.extra].flatMap((f) => typeErrors(f, errors.get(f.src ?? f.path) ?? []));
        if (diagnostics.length > 0) return { ok: false, note: `type errors:\n${diagnostics.join("\n")}` };
        if (!item.plan.run) return { ok: true, note: `type-checked; not run: ${item.plan.why}` };
        const timeoutMs = (item.plan.timeout ?? defaultTimeout) * 1000;
        const result = await runNode(item.out, dir, timeoutMs);
        const problem = judge(item.plan, result, timeoutMs);
        const took = `${(result.ms / 1000).toFixed(1)} s`;
        return problem === null ? { ok: true, note: `ran (${took})` } : { ok: false, note: `${problem}\n  (${took})` };
      },
    })),
    Math.max(1, jobs),
  );
  let passed = 0;
  for (const [i, outcome] of outcomes.entries()) {
    const { plan } = items[i];
    console.log(`${outcome.ok ? "ok  " : "FAIL"} ${plan.where} — ${outcome.note}`);
    if (outcome.ok) passed++;
  }
  const failed = outcomes.length - passed;
  console.log(`\nREADME blocks: ${outcomes.length} (generated modules in ${relative(process.cwd(), dir) || "."}/)`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0;
}

try {
  const ok = await runAll(main());
  process.exitCode = ok ? 0 : 1;
} catch (error) {
  if (!(error instanceof MarkerError)) throw error;
  console.error(`readme-blocks: ${error.message}`);
  process.exitCode = 2;
}
