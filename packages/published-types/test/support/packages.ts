/**
 * The workspace's published packages and their published declarations, found
 * as npm would: every package that is not private, and the declaration files
 * its `files` ship under dist/.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's packages/ directory. */
export const packagesDir = fileURLToPath(new URL("../../../", import.meta.url));

export interface PublishedPackage {
  /** `@bobbin/…` */
  readonly name: string;
  readonly dir: string;
  /** Absolute paths of every `.d.ts` under its dist/. */
  readonly declarations: readonly string[];
}

function declarationsUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".d.ts"))
    .map((file) => join(dir, file));
}

/** Every package of the workspace that npm would publish (not `private`). */
export function publishedPackages(): PublishedPackage[] {
  return readdirSync(packagesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(packagesDir, entry.name))
    .flatMap((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string; private?: boolean };
      if (manifest.private === true) return [];
      return [{ name: manifest.name, dir, declarations: declarationsUnder(join(dir, "dist")) }];
    });
}
