// The plugin's README setup, as a user writes it.
import bobbin from "@bobbin/eslint-plugin";
import tseslint from "typescript-eslint";

export default [
  {
    files: ["**/*.ts"],
    languageOptions: { parser: tseslint.parser, parserOptions: { projectService: true } },
  },
  bobbin.configs.recommended,
];
