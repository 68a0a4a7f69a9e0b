// What a backend author installs: the built `@bobbin/unix/conformance` export,
// with vitest an optional peer that the main entry never loads.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);

describe("the published conformance suite", () => {
  it("@bobbin/unix/conformance resolves to the build and exports conformance", () => {
    // a plain Node process in the package (a self-reference, as from a dependent package)
    const out = execFileSync(
      process.execPath,
      ["--input-type=module", "-e", 'const m = await import("@bobbin/unix/conformance"); console.log(Object.keys(m).sort().join(" "))'],
      { cwd: root, encoding: "utf8", timeout: 20_000 },
    );
    expect(out.trim()).toBe("activeHandles conformance connectedPair leaked");
  });

  it("vitest is an optional peer dependency, and the main entry does not import it", () => {
    const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
    expect(pkg.dependencies.vitest).toBeUndefined();
    expect(pkg.peerDependencies.vitest).toBeDefined();
    expect(pkg.peerDependenciesMeta.vitest.optional).toBe(true);
    expect(readFileSync(new URL("dist/index.js", root), "utf8")).not.toMatch(/from ["']vitest["']/);
    expect(readFileSync(new URL("dist/conformance/index.js", root), "utf8")).toMatch(/from ["']vitest["']/);
  });
});
