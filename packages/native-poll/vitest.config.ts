import { defineConfig } from "vitest/config";

export default defineConfig({
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
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    pool: "forks",
  },
});
