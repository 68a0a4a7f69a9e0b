/**
 * A user's ESLint configuration, in TypeScript: the plugin and its
 * recommended config must fit ESLint's own `defineConfig` types.
 */
import bobbin from "@bobbin/eslint-plugin";
import { defineConfig } from "eslint/config";

export default defineConfig([
  bobbin.configs.recommended,
  { files: ["src/**/*.ts"], plugins: { "@bobbin": bobbin }, rules: { "@bobbin/no-floating-operation": "warn" } },
]);
