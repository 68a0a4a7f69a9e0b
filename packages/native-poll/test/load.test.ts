// Without the addon: a clear error that says how to build it, and @bobbin/unix
// keeps working on its libuv backend.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { run, sleep } from "@bobbin/unix";
import { afterAll, describe, expect, it } from "vitest";

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
    expect((error as Error).message).toContain("pnpm --filter @bobbin/native-poll run build:native");
    expect((error as Error).message).toContain("libuv backend");
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

  it("without a working compiler: installation succeeds, and it says how to build; --strict fails", () => {
    const dir = mkdtempSync(join(tmpdir(), "bobbin-native-build-"));
    try {
      for (const name of ["binding.gyp", "package.json", "native", "scripts"])
        cpSync(join(root, name), join(dir, name), { recursive: true });
      symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
      const env = { ...process.env, CXX: "/bin/false", CC: "/bin/false" };
      const lenient = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: dir, env, encoding: "utf8", timeout: 120_000 });
      expect(lenient.status).toBe(0);
      expect(lenient.stderr + lenient.stdout).toContain("the native addon was not built");
      expect(lenient.stderr + lenient.stdout).toContain("build:native");
      const strict = spawnSync(process.execPath, ["scripts/build.mjs", "--strict"], { cwd: dir, env, encoding: "utf8", timeout: 120_000 });
      expect(strict.status).toBe(1);
      const skipped = spawnSync(process.execPath, ["scripts/build.mjs"], {
        cwd: dir,
        env: { ...env, BOBBIN_NATIVE_SKIP: "1" },
        encoding: "utf8",
      });
      expect(skipped.status).toBe(0);
      expect(skipped.stderr).toContain("BOBBIN_NATIVE_SKIP=1");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
