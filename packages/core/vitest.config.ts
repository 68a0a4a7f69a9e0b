import { defineConfig } from "vitest/config";

export default defineConfig({
  // Tests run the kernel with its invariant checks (see src/kernel/assert.ts).
  define: { __BOBBIN_DEV__: "true" },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
  },
});
