import { defineConfig } from "tsup";

// Core's types: one `.d.ts` per entry point, `@internal` declarations left out. Its JavaScript is
// built by Rolldown (rolldown.config.ts says why), which runs first and empties dist/.
export default defineConfig({
  entry: { index: "src/index.ts", "lowlevel/index": "src/lowlevel/index.ts" },
  format: ["esm"],
  outDir: "dist",
  dts: { only: true, compilerOptions: { stripInternal: true } },
  clean: false,
});
