import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Type-checking the consumer project reads every published declaration.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
