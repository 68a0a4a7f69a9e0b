/**
 * The vitest setup shared by packages whose tests also run across domains.
 *
 * Two projects: the package's own tests run against the *sources* of the
 * workspace packages it uses (no build needed), and its `test/domains/` tests
 * run against the *built* packages, because worker threads run plain
 * JavaScript and import `dist/` — with core's development build
 * (`packages/core/dist-dev/`, the kernel's invariant checks on) in place of
 * its published one, in the test process and in every worker thread it
 * starts (see scripts/dev-core/).
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** Core's development build, and the hook that puts it in place of the published build in worker threads. */
const devCore = fileURLToPath(new URL("./packages/core/dist-dev/index.js", import.meta.url));
const devCoreLowlevel = fileURLToPath(new URL("./packages/core/dist-dev/lowlevel/index.js", import.meta.url));
const devCoreHook = fileURLToPath(new URL("./scripts/dev-core/register.mjs", import.meta.url));

export interface PackageTests {
  /** The project name of the package's own tests. */
  readonly name: string;
  /** Workspace packages (directory names under packages/) to test against from source, with their subpath exports. */
  readonly sources: readonly string[];
  /** `forks` when tests send signals to their own process (one process per file). */
  readonly pool?: "forks" | "threads";
}

export function packageTests({ name, sources, pool }: PackageTests) {
  // `@bobbin/<dir>` is its src/index.ts; a subpath export `@bobbin/<dir>/<sub>` is its src/<sub>/index.ts.
  const alias = sources.flatMap((dir) => {
    const src = new URL(`./packages/${dir}/src/`, import.meta.url).pathname;
    return [
      { find: new RegExp(`^@bobbin/${dir}$`), replacement: `${src}index.ts` },
      { find: new RegExp(`^@bobbin/${dir}/(.+)$`), replacement: `${src}$1/index.ts` },
    ];
  });
  return defineConfig({
    test: {
      projects: [
        {
          resolve: { alias },
          // core's kernel checks its invariants when run from source (see packages/core/src/kernel/assert.ts).
          define: { __BOBBIN_DEV__: "true" },
          test: { name, include: ["test/**/*.test.ts"], exclude: ["test/domains/**"], testTimeout: 20_000, pool },
        },
        {
          resolve: {
            alias: [
              { find: /^@bobbin\/core$/, replacement: devCore },
              { find: /^@bobbin\/core\/lowlevel$/, replacement: devCoreLowlevel },
            ],
          },
          test: {
            name: "domains",
            include: ["test/domains/**/*.test.ts"],
            testTimeout: 60_000,
            pool,
            execArgv: ["--import", devCoreHook],
          },
        },
      ],
    },
  });
}
