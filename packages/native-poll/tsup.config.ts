import { defineConfig } from "tsup";

export default defineConfig({
  // The package, and what its backends are built on (`@bobbin/native-poll/backend`).
  entry: { index: "src/index.ts", "backend/index": "src/backend/index.ts" },
  format: ["esm"],
  // tsconfig.json maps the workspace packages to their sources for
  // typechecking without a build; the published types must import them instead.
  dts: { entry: { index: "src/index.ts", "backend/index": "src/backend/index.ts" }, compilerOptions: { paths: {}, stripInternal: true } },
  external: ["@bobbin/core", "@bobbin/sync", "@bobbin/unix", "@bobbin/unix/backend"],
  sourcemap: true,
  // Keep build/ (the addon): tsup only cleans dist/.
  clean: true,
  target: "node20",
});
