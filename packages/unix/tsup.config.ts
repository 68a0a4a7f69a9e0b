import { defineConfig } from "tsup";

export default defineConfig({
  // The package, its kit for backend authors (`@bobbin/unix/backend`, which
  // shares its modules with the main entry through chunks), and its
  // conformance suite (`@bobbin/unix/conformance`, which imports vitest and
  // the package itself by name, so the main entry shares no code with it).
  // The suite's child process runs `conformance/emfile-child.js`.
  entry: {
    index: "src/index.ts",
    "backend/index": "src/backend/index.ts",
    "conformance/index": "src/conformance/index.ts",
    "conformance/emfile-child": "src/conformance/emfile-child.ts",
  },
  format: ["esm"],
  // The conformance suite imports @bobbin/unix by name: its declarations are
  // checked against the sources (a clean build has no dist/index.d.ts yet),
  // and, the package being external, keep importing it by name.
  dts: {
    entry: { index: "src/index.ts", "backend/index": "src/backend/index.ts", "conformance/index": "src/conformance/index.ts" },
    compilerOptions: { stripInternal: true, paths: { "@bobbin/unix": ["./src/index.ts"] } },
  },
  external: ["@bobbin/core", "@bobbin/sync", "@bobbin/unix", "vitest"],
  sourcemap: true,
  clean: true,
  target: "node20",
});
