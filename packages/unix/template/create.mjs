#!/usr/bin/env node
// Makes a backend project from this template:
//   node node_modules/@bobbin/unix/template/create.mjs <directory> [name]
// It copies the template (package.json named <name>, default the directory's
// name; src/, test/, tsconfig.json, README.md) into <directory>, which must not exist.
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const [target, name = basename(resolve(target ?? "."))] = process.argv.slice(2);
if (target === undefined) {
  console.error("usage: node create.mjs <directory> [package name]");
  process.exit(2);
}
const to = resolve(target);
if (existsSync(to)) {
  console.error(`create.mjs: ${to} exists already; name a new directory`);
  process.exit(1);
}
const here = dirname(fileURLToPath(import.meta.url));
for (const entry of ["src", "test", "tsconfig.json", "README.md", "package.json"])
  cpSync(join(here, entry), join(to, entry), { recursive: true });
const pkg = JSON.parse(readFileSync(join(to, "package.json"), "utf8"));
pkg.name = name;
// The versions of @bobbin/unix and @bobbin/core this template came with.
const unix = JSON.parse(readFileSync(join(here, "..", "package.json"), "utf8"));
pkg.dependencies["@bobbin/unix"] = `^${unix.version}`;
const core = unix.dependencies?.["@bobbin/core"];
if (typeof core === "string" && !core.startsWith("workspace:")) pkg.dependencies["@bobbin/core"] = /^\d/.test(core) ? `^${core}` : core;
writeFileSync(join(to, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
console.log(`${to}: a backend project for @bobbin/unix. Next: cd ${target} && npm install && npm test`);
