import { join } from "node:path";
import tsParser from "@typescript-eslint/parser";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import plugin from "../src/index.js";
import { fixtures } from "./support/rule-tester.js";

const FORGOTTEN = `import * as U from "@bobbin/unix";
export function* main(c: U.Socket) {
  U.write(c, "hi");
  yield* U.close(c);
}
`;

/** ESLint as a user runs it: a flat config of type-aware parsing plus the given configs. */
function eslint(...configs: ESLint.Options["overrideConfig"][]): ESLint {
  return new ESLint({
    cwd: fixtures,
    overrideConfigFile: true,
    overrideConfig: [
      { files: ["**/*.ts"], languageOptions: { parser: tsParser, parserOptions: { projectService: true, tsconfigRootDir: fixtures } } },
      ...configs.flat(),
    ] as ESLint.Options["overrideConfig"],
  });
}

describe("the plugin", () => {
  it("names itself after its package", () => {
    expect(plugin.meta.name).toBe("@bobbin/eslint-plugin");
    expect(plugin.meta.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.keys(plugin.rules)).toEqual(["no-floating-operation"]);
  });

  it("recommended: registers the plugin as @bobbin and reports a forgotten yield* as an error, with the fix", async () => {
    const [result] = await eslint(plugin.configs.recommended).lintText(FORGOTTEN, { filePath: join(fixtures, "file.ts") });
    expect(result!.messages).toHaveLength(1);
    const [message] = result!.messages;
    expect(message).toMatchObject({ ruleId: "@bobbin/no-floating-operation", severity: 2, line: 3 });
    expect(message!.message).toContain('yield* U.write(c, "hi")');
    expect(message!.suggestions?.map((s) => s.fix.text)).toEqual(['yield* U.write(c, "hi")']);
  });

  it("recommended: applies to TypeScript files only, so the JavaScript around them (eslint.config.js) lints without type information", async () => {
    const [result] = await eslint(plugin.configs.recommended).lintText("export default [];\n", {
      filePath: join(fixtures, "eslint.config.js"),
    });
    expect(result!.messages).toEqual([]);
  });

  it("without type information, says that the rule needs it", async () => {
    const untyped = new ESLint({
      cwd: fixtures,
      overrideConfigFile: true,
      overrideConfig: [{ files: ["**/*.ts"], languageOptions: { parser: tsParser } }, plugin.configs.recommended],
    });
    await expect(untyped.lintText(FORGOTTEN, { filePath: join(fixtures, "file.ts") })).rejects.toThrow(/type information/);
  });
});
