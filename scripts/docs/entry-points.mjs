// The public entry points of the workspace: every export of every published package that
// has types, with the source file its declarations are built from.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The `types` file of an `exports` entry, whatever conditions wrap it (import, require…). */
function typesOf(target) {
  if (typeof target !== "object" || target === null) return undefined;
  if (typeof target.types === "string") return target.types;
  for (const inner of Object.values(target)) {
    const found = typesOf(inner);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * @param {string} root the repository
 * @returns {{ name: string, dir: string, source: string }[]} e.g. `@bobbin/unix/conformance`,
 *   `packages/unix`, and the absolute path of `src/conformance/index.ts`
 */
export function entryPoints(root) {
  const found = [];
  for (const dir of readdirSync(join(root, "packages")).sort()) {
    const json = JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8"));
    if (json.private === true) continue;
    for (const [subpath, target] of Object.entries(json.exports ?? {})) {
      const types = typesOf(target);
      if (types === undefined) continue; // no declarations: not an API (core's worker entry)
      const source = join(root, "packages", dir, types.replace(/^\.\/dist\//, "src/").replace(/\.d\.[cm]?ts$/, ".ts"));
      if (!existsSync(source)) throw new Error(`${json.name} exports ${subpath} with types ${types}, but ${source} does not exist`);
      found.push({ name: subpath === "." ? json.name : `${json.name}/${subpath.replace(/^\.\//, "")}`, dir: `packages/${dir}`, source });
    }
  }
  return found;
}
