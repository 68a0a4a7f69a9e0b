#!/usr/bin/env node
// `pnpm test:docs`' browser check of the API reference that `pnpm run docs` wrote: opens every
// page of docs/api/ in headless Chromium (Debian's `chromium`, installed here with apt-get
// when missing) and fails when
//   - an entry point's page does not list every export of the package's published
//     declarations (its `dist/*.d.ts`, as a user's editor sees them),
//   - a link, script, style or image of a page points to a file of the reference that does
//     not exist, or to an anchor the target page does not have,
//   - a page throws while it loads.
// Chromium is driven with playwright-core, which downloads no browser of its own.
//
//   node scripts/docs-browser.mjs [--dir=docs/api]
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import ts from "typescript";
import { entryPoints } from "./docs/entry-points.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({ options: { dir: { type: "string" } } });
const dir = resolve(args.dir ?? join(root, "docs/api"));

function loud(message) {
  console.error(`\n${"=".repeat(78)}\ndocs browser check: ${message}\n${"=".repeat(78)}\n`);
  process.exit(1);
}

/** Debian's chromium, installed with apt-get when it is not there yet. */
function chromiumPath() {
  const find = () => ["chromium", "chromium-browser"].map((name) => spawnSync("which", [name]).stdout?.toString().trim()).find(Boolean);
  const found = find();
  if (found) return found;
  console.log("chromium is not installed: installing Debian's package (apt-get install chromium)");
  const sudo = process.getuid?.() === 0 ? [] : ["sudo"];
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  try {
    execFileSync(sudo[0] ?? "apt-get", [...sudo.slice(1), ...(sudo.length ? ["apt-get"] : []), "update", "-qq"], { stdio: "inherit", env });
    execFileSync(sudo[0] ?? "apt-get", [...sudo.slice(1), ...(sudo.length ? ["apt-get"] : []), "install", "-y", "-qq", "chromium"], {
      stdio: "inherit",
      env,
    });
  } catch (error) {
    loud(
      `chromium is missing and could not be installed (${error.message}).\nInstall Debian's \`chromium\` package (apt-get install chromium), then run \`pnpm test:docs\` again.`,
    );
  }
  return find() ?? loud("apt-get installed chromium, but no `chromium` executable is on the PATH");
}

/** The names a package's published declarations export at an entry point. */
function publishedExports(entry) {
  const types = join(
    root,
    entry.dir,
    relative(join(root, entry.dir), entry.source)
      .replace(/^src\//, "dist/")
      .replace(/\.ts$/, ".d.ts"),
  );
  if (!existsSync(types)) loud(`${types} does not exist: run \`pnpm build\` first`);
  const program = ts.createProgram([types], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const symbol = checker.getSymbolAtLocation(program.getSourceFile(types));
  return checker.getExportsOfModule(symbol).map((s) => s.name);
}

const htmlFiles = (d) =>
  readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? htmlFiles(join(d, e.name)) : e.name.endsWith(".html") ? [join(d, e.name)] : [],
  );

/** What a page shows once its scripts ran: its anchors, what it refers to, the exports it lists. */
async function visit(page, file) {
  await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
  // The navigation tree is built by the page's script after load; its links count too.
  await page.waitForFunction(() => document.querySelector("#tsd-nav-container a") !== null, null, { timeout: 10_000 });
  return page.evaluate(() => ({
    ids: [...document.querySelectorAll("[id], a[name]")].map((e) => e.id || e.getAttribute("name")),
    refs: [...document.querySelectorAll("a[href], link[href], script[src], img[src]")].map((e) => ({
      tag: e.tagName.toLowerCase(),
      url: e.tagName === "A" || e.tagName === "LINK" ? e.href : e.src,
      text: e.textContent.trim(),
    })),
    // An export's name: the first link or span of its summary (a re-export shows `name → target`).
    members: [...document.querySelectorAll(".tsd-member-summary-name")].map((e) =>
      e.querySelector(":scope > a, :scope > span")?.textContent.trim(),
    ),
  }));
}

async function main() {
  if (!existsSync(join(dir, "index.html"))) loud(`${dir}/index.html does not exist: run \`pnpm run docs\` first`);
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] });
  const problems = [];
  try {
    const pages = new Map(); // file → what the page shows once its scripts ran
    const queue = htmlFiles(dir);
    // Two tabs at a time: as many as the machine has cores, no more.
    const tab = async () => {
      const page = await browser.newPage();
      let thrown = [];
      page.on("pageerror", (error) => thrown.push(error.message));
      for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
        thrown = [];
        pages.set(file, await visit(page, file));
        for (const message of thrown) problems.push(`${relative(dir, file)}: the page threw: ${message}`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(2, availableParallelism()) }, tab));
    // Every link inside the reference leads to a file of it, and to an anchor that page has.
    for (const [file, { refs }] of pages) {
      for (const { tag, url } of refs) {
        if (!url.startsWith("file:")) continue;
        const target = new URL(url);
        const path = fileURLToPath(target);
        if (!existsSync(path)) problems.push(`${relative(dir, file)}: <${tag}> to ${relative(dir, path)}, which does not exist`);
        else if (target.hash.length > 1 && path.endsWith(".html")) {
          const id = decodeURIComponent(target.hash.slice(1));
          if (!pages.get(path)?.ids.includes(id))
            problems.push(`${relative(dir, file)}: link to ${relative(dir, path)}#${id}, an anchor that page lacks`);
        }
      }
    }
    // Every entry point has a page, reached from the index, that lists every published export.
    const index = pages.get(join(dir, "index.html"));
    for (const entry of entryPoints(root)) {
      const link = index.refs.find((r) => r.tag === "a" && r.text === entry.name && r.url.startsWith("file:"));
      if (!link) {
        problems.push(`index.html has no link to ${entry.name}'s page`);
        continue;
      }
      const members = pages.get(fileURLToPath(new URL(link.url)))?.members ?? [];
      const missing = publishedExports(entry).filter((name) => !members.includes(name));
      if (missing.length > 0) problems.push(`${entry.name}'s page does not list: ${missing.join(", ")}`);
      else console.log(`ok   ${entry.name}: its page lists its ${members.length} exports`);
    }
    // The READMEs' links into the reference lead to pages that exist.
    for (const readme of ["README.md", ...readdirSync(join(root, "packages")).map((d) => `packages/${d}/README.md`)]) {
      if (!existsSync(join(root, readme))) continue;
      for (const [, target] of readFileSync(join(root, readme), "utf8").matchAll(/\]\(([^)#\s]*docs\/api\/[^)#\s]*)/g)) {
        const path = join(dir, relative(join(root, "docs/api"), resolve(root, dirname(readme), target)));
        if (!existsSync(path)) problems.push(`${readme} links to ${target}, which the reference does not have`);
      }
    }
    console.log(`opened ${pages.size} pages of ${relative(process.cwd(), dir) || "."}/ in ${await browser.version()}`);
  } finally {
    await browser.close();
  }
  for (const p of problems) console.error(`FAIL ${p}`);
  console.log(`${problems.length === 0 ? 1 : 0} passed, ${problems.length === 0 ? 0 : 1} failed`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}

await main();
