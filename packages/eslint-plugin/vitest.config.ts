import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The first type-aware lint of a file builds its TypeScript program.
    testTimeout: 60_000,
  },
});
