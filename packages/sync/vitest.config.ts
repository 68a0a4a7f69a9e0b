import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // Test against core's sources, so no build of @bobbin/core is needed.
    alias: { "@bobbin/core": new URL("../core/src/index.ts", import.meta.url).pathname },
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
  },
});
