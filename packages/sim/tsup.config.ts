import { defineConfig } from "tsup";

export default defineConfig({
  // The package, and its vitest helper (`@bobbin/sim/vitest`, which imports
  // vitest and the package itself by name, so the main entry shares no code
  // with it and never imports vitest).
  entry: { index: "src/index.ts", vitest: "src/vitest.ts" },
  format: ["esm"],
  // tsconfig.json maps the workspace packages to their sources for typechecking;
  // the published types must import the packages instead (the helper's, this one by name).
  dts: {
    entry: { index: "src/index.ts", vitest: "src/vitest.ts" },
    compilerOptions: { stripInternal: true, paths: { "@bobbin/sim": ["./src/index.ts"] } },
  },
  external: ["@bobbin/core", "@bobbin/sync", "@bobbin/unix", "@bobbin/sim", "vitest"],
  sourcemap: true,
  clean: true,
  target: "node20",
});
