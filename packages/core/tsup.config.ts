import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts", worker: "src/domains/worker.ts" },
  format: ["esm"],
  dts: { entry: "src/index.ts", compilerOptions: { stripInternal: true } },
  sourcemap: true,
  clean: true,
  target: "node20",
  // Published builds leave out the kernel's development-only invariant checks.
  define: { __BOBBIN_DEV__: "false" },
});
