import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts" },
  format: ["esm"],
  // tsconfig.json maps core to its sources for typechecking; the published types import it by name.
  dts: { entry: { index: "src/index.ts" }, compilerOptions: { stripInternal: true, paths: {} } },
  external: ["@bobbin/core", "@opentelemetry/api"],
  sourcemap: true,
  clean: true,
  target: "node20",
});
