import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // Test against the sources of core and sync, so no build is needed.
    alias: {
      "@bobbin/core": new URL("../core/src/index.ts", import.meta.url).pathname,
      "@bobbin/sync": new URL("../sync/src/index.ts", import.meta.url).pathname,
    },
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    // Signal tests send signals to the test process itself: one process per file.
    pool: "forks",
  },
});
