/**
 * @bobbin/eslint-plugin — ESLint rules for Bobbin programs. One rule,
 * `no-floating-operation`, flags an operation created by a statement and never
 * run (a forgotten `yield*`); it needs type information from
 * typescript-eslint's parser.
 *
 * @example
 * ```js
 * // eslint.config.js
 * import tseslint from "typescript-eslint";
 * import bobbin from "@bobbin/eslint-plugin";
 *
 * export default [
 *   { files: ["**\/*.ts"], languageOptions: { parser: tseslint.parser, parserOptions: { projectService: true } } },
 *   bobbin.configs.recommended,
 * ];
 * ```
 * @packageDocumentation
 */
import { createRequire } from "node:module";
import type { ESLint, Linter, Rule } from "eslint";
import { noFloatingOperation } from "./rules/no-floating-operation.js";

// src/index.ts (tests) and dist/index.js (published) both sit one level below the package root.
const pkg = createRequire(import.meta.url)("../package.json") as { name: string; version: string };

/**
 * The plugin's shape, in ESLint's own types (so that it fits `defineConfig`
 * and plain config arrays alike): its rules and the `recommended` config.
 *
 * @example
 * ```ts
 * const rules: BobbinPlugin["rules"] = bobbin.rules;   // { "no-floating-operation": … }
 * ```
 */
export interface BobbinPlugin extends ESLint.Plugin {
  readonly meta: { readonly name: string; readonly version: string };
  readonly rules: { readonly "no-floating-operation": Rule.RuleModule };
  readonly configs: { readonly recommended: Linter.Config };
}

const recommended: Linter.Config = {
  name: "@bobbin/recommended",
  // The rule needs type information, which only TypeScript files have (an
  // eslint.config.js beside them would make it throw).
  files: ["**/*.ts", "**/*.tsx", "**/*.mts", "**/*.cts"],
  rules: { "@bobbin/no-floating-operation": "error" },
};

/**
 * The plugin. Register it under `@bobbin` (`plugins: { "@bobbin": plugin }`),
 * or use `configs.recommended`, which does that and turns
 * `@bobbin/no-floating-operation` on as an error for TypeScript files.
 *
 * @example
 * ```js
 * import bobbin from "@bobbin/eslint-plugin";
 * export default [typeAwareParsing, bobbin.configs.recommended];
 * ```
 * @throws never (a plain object; the rule throws at lint time without type information).
 */
const plugin: BobbinPlugin = {
  meta: { name: pkg.name, version: pkg.version },
  // typescript-eslint's rule type declares context methods that ESLint 9
  // removed (getScope, getAncestors…); the rule uses none of them.
  rules: { "no-floating-operation": noFloatingOperation as unknown as Rule.RuleModule },
  configs: { recommended },
};
// The config registers the plugin it belongs to.
recommended.plugins = { "@bobbin": plugin };

export default plugin;
// `require("@bobbin/eslint-plugin")` (an eslint.config.cjs, on Node's require of
// ES modules) gets the plugin itself, as `import` does, not a namespace.
export { plugin as "module.exports" };
