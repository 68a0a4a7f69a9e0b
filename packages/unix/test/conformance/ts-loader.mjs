// Module hooks for child processes of the conformance suite: they run the
// TypeScript sources of @bobbin/core, @bobbin/sync, @bobbin/unix (and a
// backend under test) directly, transpiled with esbuild, so no build is needed.
//   node --import <this folder>/register.mjs child.ts …
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transformSync } from "esbuild";

const packages = new URL("../../../", import.meta.url);
const ALIASES = {
  "@bobbin/core": new URL("core/src/index.ts", packages).href,
  "@bobbin/sync": new URL("sync/src/index.ts", packages).href,
  "@bobbin/unix": new URL("unix/src/index.ts", packages).href,
};

export async function resolve(specifier, context, next) {
  const alias = ALIASES[specifier];
  if (alias !== undefined) return { url: alias, shortCircuit: true };
  if ((specifier.startsWith(".") || specifier.startsWith("file:")) && specifier.endsWith(".js") && context.parentURL) {
    const url = new URL(specifier, context.parentURL);
    const ts = new URL(url.href.replace(/\.js$/, ".ts"));
    if (!existsSync(fileURLToPath(url)) && existsSync(fileURLToPath(ts))) return { url: ts.href, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url.startsWith("file:") && url.endsWith(".ts")) {
    const source = readFileSync(fileURLToPath(url), "utf8");
    const { code } = transformSync(source, {
      loader: "ts",
      format: "esm",
      target: "node20",
      sourcefile: fileURLToPath(url),
      define: { __BOBBIN_DEV__: "true" },
    });
    return { format: "module", source: code, shortCircuit: true };
  }
  return next(url, context);
}

export { pathToFileURL };
