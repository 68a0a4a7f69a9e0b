import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  // tsconfig.json maps the workspace packages to their sources for typechecking;
  // the published types must import the packages instead.
  dts: { entry: "src/index.ts", compilerOptions: { stripInternal: true, paths: {} } },
  sourcemap: true,
  clean: true,
  target: "node20",
});
