import { defineConfig, type RolldownOptions } from "rolldown";

// Core's JavaScript is bundled by Rolldown, its types by tsup (tsup.config.ts). Not by tsup/esbuild:
// esbuild writes every module-level `const` of a bundle as `var`, and V8 compiles a read of a
// module-level `const` into the value itself where a `var` is a load from the module's context at
// each use, in every step of the kernel (YIELDED, PHASE, resumeNext, …). Rolldown keeps `const` and
// `let` (its top-level classes are still `var X = class`), inlines the `const enum`s across modules
// as esbuild did, and drops the `__BOBBIN_DEV__` branches. An unbundled build would keep them too,
// but would import each `const enum` member as a property of an object.
const build = (outDir: string, dev: boolean): RolldownOptions => ({
  input: { index: "src/index.ts", "lowlevel/index": "src/lowlevel/index.ts", worker: "src/domains/worker.ts" },
  platform: "node",
  tsconfig: "tsconfig.json",
  transform: { target: "node20", define: { __BOBBIN_DEV__: String(dev) } },
  output: {
    dir: outDir,
    format: "esm",
    sourcemap: true,
    cleanDir: true,
    chunkFileNames: "chunk-[hash].js",
    // What ships is code: the sources' documentation is in the types and the source maps.
    comments: { legal: true, annotation: true, jsdoc: false },
  },
});

export default defineConfig([
  // The published build leaves out the kernel's development-only invariant checks.
  build("dist", false),
  // The development build keeps them, with the published build's types: the tests that run the built
  // package load it (worker domains run plain JavaScript; see vitest.projects.ts). It is not published.
  {
    ...build("dist-dev", true),
    plugins: [
      {
        name: "published-types",
        generateBundle() {
          this.emitFile({ type: "asset", fileName: "index.d.ts", source: 'export * from "../dist/index.js";\n' });
          this.emitFile({ type: "asset", fileName: "lowlevel/index.d.ts", source: 'export * from "../../dist/lowlevel/index.js";\n' });
        },
      },
    ],
  },
]);
