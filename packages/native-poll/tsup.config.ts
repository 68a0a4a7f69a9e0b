import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  // tsconfig.json maps the workspace packages to their sources for
  // typechecking without a build; the published types must import them instead.
  dts: { entry: "src/index.ts", compilerOptions: { paths: {}, stripInternal: true } },
  external: ["@bobbin/core", "@bobbin/sync", "@bobbin/unix"],
  sourcemap: true,
  // Keep build/ (the addon): tsup only cleans dist/.
  clean: true,
  target: "node20",
});
