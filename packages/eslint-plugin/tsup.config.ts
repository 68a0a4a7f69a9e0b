import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  dts: { entry: "src/index.ts", compilerOptions: { stripInternal: true } },
  sourcemap: true,
  clean: true,
  target: "node20",
});
