/**
 * typescript-eslint's RuleTester on vitest, with type information from a real
 * project (test/fixtures/tsconfig.json) that resolves the workspace's built
 * `@bobbin/*` packages as a user's project would.
 */
import { fileURLToPath } from "node:url";
import { RuleTester } from "@typescript-eslint/rule-tester";
import { afterAll, describe, it } from "vitest";

RuleTester.afterAll = afterAll;
RuleTester.describe = describe;
RuleTester.it = it;

/** The fixture project's directory: the tester's files (`file.ts`) are linted as if they were in it. */
export const fixtures = fileURLToPath(new URL("../fixtures/", import.meta.url));

/** A RuleTester whose files are type-checked in the fixture project. */
export function typedRuleTester(): RuleTester {
  return new RuleTester({
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: fixtures },
    },
  });
}
