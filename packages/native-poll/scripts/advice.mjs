// What to do when the addon is not there, in the words both the install
// script (scripts/build.mjs) and NativeUnavailable (src/load.ts) use: commands
// that work in the project that installed the package, whatever its package
// manager. Plain JavaScript, as the install script runs before any build.

import { join } from "node:path";

/**
 * The lines that say how to get the addon, for the package installed in `dir`.
 * @param {string} dir
 * @returns {string[]}
 */
export function howToBuild(dir) {
  return [
    "@bobbin/unix keeps working on its default libuv backend; only the native backends are unavailable.",
    "To build the addon from source you need a C++ compiler (g++ or clang++), make and python3; then, in your project:",
    "  npm:  npm rebuild @bobbin/native-poll",
    "  pnpm: pnpm approve-builds (or list @bobbin/native-poll under onlyBuiltDependencies in pnpm-workspace.yaml;",
    "        allowBuilds on pnpm 11), then pnpm rebuild @bobbin/native-poll",
    "  yarn: yarn rebuild @bobbin/native-poll (Yarn 1: yarn install --force)",
    `  or, with any of them: node ${join(dir, "scripts", "build.mjs")} --strict`,
  ];
}
