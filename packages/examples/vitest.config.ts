import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const dist = fileURLToPath(new URL("./dist/", import.meta.url));

export default defineConfig({
  resolve: {
    // Tests import the examples from src/ (so they typecheck without a
    // build) but run the built files in dist/: parallel tasks live in worker
    // threads, which import their modules by URL and run plain JavaScript.
    // `pnpm test` builds first (turbo); so does `pnpm build && vitest run`.
    alias: [{ find: /^(?:\.\.\/)+src\/(.*)\.js$/, replacement: `${dist}$1.js` }],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Socket and signal tests: one process per file, files one after another
    // so that timing-sensitive tests do not compete for the CPU.
    pool: "forks",
    fileParallelism: false,
  },
});
