import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        resolve: {
          // Test against the sources of the workspace packages, so no build is needed
          // (the addon itself must be built: pnpm --filter @bobbin/native-poll build:native).
          alias: {
            "@bobbin/core": new URL("../core/src/index.ts", import.meta.url).pathname,
            "@bobbin/sync": new URL("../sync/src/index.ts", import.meta.url).pathname,
            "@bobbin/unix": new URL("../unix/src/index.ts", import.meta.url).pathname,
          },
        },
        test: {
          name: "native-poll",
          include: ["test/**/*.test.ts"],
          exclude: ["test/domains/**"],
          testTimeout: 20_000,
          pool: "forks",
        },
      },
      {
        // Across domains: workers run plain JavaScript, so these use the built
        // packages (core's, unix's and this one's dist), with no alias.
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
