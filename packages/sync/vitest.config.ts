import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        // Test against core's sources, so no build of @bobbin/core is needed.
        resolve: { alias: { "@bobbin/core": new URL("../core/src/index.ts", import.meta.url).pathname } },
        test: {
          name: "sync",
          include: ["test/**/*.test.ts"],
          exclude: ["test/domains/**"],
          testTimeout: 20_000,
        },
      },
      {
        // Across domains: workers run plain JavaScript, so these use the built
        // packages (core's and this one's dist), with no alias.
        test: {
          name: "domains",
          include: ["test/domains/**/*.test.ts"],
          testTimeout: 60_000,
        },
      },
    ],
  },
});
