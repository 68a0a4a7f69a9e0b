import { writeFile } from "node:fs/promises";
import { defineConfig, type Options } from "tsup";

const build: Options = {
  entry: { index: "src/index.ts", "lowlevel/index": "src/lowlevel/index.ts", worker: "src/domains/worker.ts" },
  format: ["esm"],
  sourcemap: true,
  clean: true,
  target: "node20",
};

export default defineConfig([
  // The published build leaves out the kernel's development-only invariant checks.
  {
    ...build,
    outDir: "dist",
    dts: { entry: { index: "src/index.ts", "lowlevel/index": "src/lowlevel/index.ts" }, compilerOptions: { stripInternal: true } },
    define: { __BOBBIN_DEV__: "false" },
  },
  // The development build keeps them, with the published build's types: the tests that run the built
  // package load it (worker domains run plain JavaScript; see vitest.projects.ts). It is not published.
  {
    ...build,
    outDir: "dist-dev",
    define: { __BOBBIN_DEV__: "true" },
    onSuccess: async () => {
      await writeFile("dist-dev/index.d.ts", 'export * from "../dist/index.js";\n');
      await writeFile("dist-dev/lowlevel/index.d.ts", 'export * from "../../dist/lowlevel/index.js";\n');
    },
  },
]);
