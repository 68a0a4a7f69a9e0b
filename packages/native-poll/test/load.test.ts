// Without the addon: a clear error that says how to build it, and @bobbin/unix
// keeps working on its libuv backend.
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { run, sleep } from "@bobbin/unix";
import { afterAll, afterEach, describe, expect, it } from "vitest";

const saved = process.env.BOBBIN_NATIVE_ADDON;
process.env.BOBBIN_NATIVE_ADDON = "/nonexistent/bobbin_native.node";
afterAll(() => {
  if (saved === undefined) delete process.env.BOBBIN_NATIVE_ADDON;
  else process.env.BOBBIN_NATIVE_ADDON = saved;
});

describe("when the addon is not built", () => {
  it("asking for the native backend says how to build it", async () => {
    const m = await import("../src/index.js");
    const lowLevel = await import("../src/backend/index.js");
    expect(m.nativeAvailable()).toBe(false);
    let error: unknown;
    try {
      m.nativeBackend();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(m.NativeUnavailable);
    expect(error).toMatchObject({ code: "ERR_BOBBIN_NATIVE_UNAVAILABLE", name: "NativeUnavailable" });
    const message = (error as Error).message;
    expect(message).toContain("BOBBIN_NATIVE_ADDON=/nonexistent/bobbin_native.node does not exist");
    // Commands that work in the project that installed the package, with each package manager.
    expect(message).toContain("npm rebuild @bobbin/native-poll");
    expect(message).toContain("pnpm approve-builds");
    expect(message).toContain("onlyBuiltDependencies");
    expect(message).toContain("pnpm rebuild @bobbin/native-poll");
    expect(message).toContain("yarn rebuild @bobbin/native-poll");
    expect(message).toContain(`node ${join(fileURLToPath(new URL("..", import.meta.url)), "scripts", "build.mjs")} --strict`);
    expect(message).toContain("libuv backend");
    expect(() => new lowLevel.Poller(() => {})).toThrow(m.NativeUnavailable);
    expect(() => new m.ArenaPool()).toThrow(m.NativeUnavailable);
    expect(() => lowLevel.syscalls.pipe()).toThrow(m.NativeUnavailable);
  });

  it("@bobbin/unix keeps its libuv backend", async () => {
    await expect(
      run(function* () {
        yield* sleep(0.001);
        return "ok";
      }),
    ).resolves.toBe("ok");
  });
});

describe("scripts/build.mjs", () => {
  const root = fileURLToPath(new URL("..", import.meta.url));

  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** The package's sources (no build/, no prebuilds/) in a temporary directory. */
  function copy(): string {
    const dir = mkdtempSync(join(tmpdir(), "bobbin-native-build-"));
    dirs.push(dir);
    for (const name of ["binding.gyp", "package.json", "native", "scripts"]) cpSync(join(root, name), join(dir, name), { recursive: true });
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
    return dir;
  }
  const noCompiler = { ...process.env, CXX: "/bin/false", CC: "/bin/false" };
  const prebuilt = join("prebuilds", `${process.platform}-${process.arch}`, "node.napi.node");

  /** The install script, without a working compiler, in a copy that has `binary` as its prebuilt addon. */
  function installWithPrebuilt(binary: (file: string) => void): { dir: string; r: SpawnSyncReturns<string> } {
    const dir = copy();
    mkdirSync(dirname(join(dir, prebuilt)), { recursive: true });
    binary(join(dir, prebuilt));
    const r = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: dir, env: noCompiler, encoding: "utf8", timeout: 120_000 });
    return { dir, r };
  }

  it("without a working compiler: installation succeeds, and it says how to build; --strict fails", () => {
    const dir = copy();
    const env = noCompiler;
    const lenient = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: dir, env, encoding: "utf8", timeout: 120_000 });
    expect(lenient.status).toBe(0);
    expect(lenient.stderr).toContain(
      `the native addon was not built (no prebuilt binary for ${process.platform}-${process.arch}, and the build`,
    );
    expect(lenient.stderr).toContain("npm rebuild @bobbin/native-poll");
    expect(lenient.stderr).toContain(`node ${join(dir, "scripts", "build.mjs")} --strict`);
    const strict = spawnSync(process.execPath, ["scripts/build.mjs", "--strict"], { cwd: dir, env, encoding: "utf8", timeout: 120_000 });
    expect(strict.status).toBe(1);
    const skipped = spawnSync(process.execPath, ["scripts/build.mjs"], {
      cwd: dir,
      env: { ...env, BOBBIN_NATIVE_SKIP: "1" },
      encoding: "utf8",
    });
    expect(skipped.status).toBe(0);
    expect(skipped.stderr).toContain("BOBBIN_NATIVE_SKIP=1");
  }, 240_000);

  it("a prebuilt binary that loads here is used, and nothing is compiled", () => {
    const { dir, r } = installWithPrebuilt((file) => copyFileSync(join(root, "build", "Release", "bobbin_native.node"), file));
    expect(r.stdout).toContain(`using the prebuilt binary ${prebuilt}`);
    expect(r.status).toBe(0);
    expect(existsSync(join(dir, "build"))).toBe(false);
  }, 120_000);

  it("a prebuilt binary that does not load here: built from source instead, and the message says both", () => {
    const { r } = installWithPrebuilt((file) => writeFileSync(file, "not a shared object"));
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(`the prebuilt binary ${prebuilt} does not load here`);
    expect(r.stderr).toContain("the build from source failed");
  }, 240_000);
});
