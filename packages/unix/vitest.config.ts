import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        resolve: {
          // Test against the sources of core and sync, so no build is needed.
          alias: {
            "@bobbin/core": new URL("../core/src/index.ts", import.meta.url).pathname,
            "@bobbin/sync": new URL("../sync/src/index.ts", import.meta.url).pathname,
          },
        },
        test: {
          name: "unix",
          include: ["test/**/*.test.ts"],
          exclude: ["test/domains/**"],
          testTimeout: 20_000,
          // Signal tests send signals to the test process itself: one process per file.
          pool: "forks",
        },
      },
      {
        // Across domains: workers run plain JavaScript, so these use the built
        // packages (core's, sync's and this one's dist), with no alias.
        test: {
          name: "domains",
          include: ["test/domains/**/*.test.ts"],
          testTimeout: 60_000,
          pool: "forks",
        },
      },
    ],
  },
});
