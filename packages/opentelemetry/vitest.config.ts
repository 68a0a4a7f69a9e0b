import { defineConfig } from "vitest/config";

// The package's tests run against core's sources, with the kernel's invariant checks on.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@bobbin\/core$/, replacement: new URL("../core/src/index.ts", import.meta.url).pathname },
      { find: /^@bobbin\/core\/lowlevel$/, replacement: new URL("../core/src/lowlevel/index.ts", import.meta.url).pathname },
    ],
  },
  define: { __BOBBIN_DEV__: "true" },
  test: { include: ["test/**/*.test.ts"], testTimeout: 20_000 },
});
