import { defineConfig } from "tsup";

export default defineConfig({
  // One output file per source file, no bundling: a parallel task is found
  // again by a worker through its module's `import.meta.url`, so the module
  // that defines it must stay a file of its own in dist/ (a bundler would
  // inline it into the entry that calls `run`, and the worker would run that).
  entry: ["src/**/*.ts"],
  bundle: false,
  format: ["esm"],
  sourcemap: true,
  clean: true,
  target: "node20",
});
