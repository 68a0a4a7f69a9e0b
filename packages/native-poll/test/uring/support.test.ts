// Where the io_uring backend cannot work: uringAvailable() says so without
// throwing, uringSupport() says why, and asking for the backend throws
// UringUnavailable; the other backends keep working.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

describe("without the addon", () => {
  const saved = process.env.BOBBIN_NATIVE_ADDON;
  process.env.BOBBIN_NATIVE_ADDON = "/nonexistent/bobbin_native.node";
  afterAll(() => {
    if (saved === undefined) delete process.env.BOBBIN_NATIVE_ADDON;
    else process.env.BOBBIN_NATIVE_ADDON = saved;
  });

  it("uringAvailable() is false, uringSupport() says why, uringBackend() throws UringUnavailable", async () => {
    const m = await import("../../src/index.js");
    expect(m.uringAvailable()).toBe(false);
    const support = m.uringSupport();
    expect(support.available).toBe(false);
    expect(support.setup).toEqual([]);
    expect(support.reason).toMatch(process.platform === "linux" ? /native addon is not available/ : /io_uring is Linux's/);
    let error: unknown;
    try {
      m.uringBackend();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(m.UringUnavailable);
    expect(error).toMatchObject({ name: "UringUnavailable", code: "ERR_BOBBIN_URING_UNAVAILABLE", reason: support.reason });
    expect((error as Error).message).toContain("uringAvailable()");
    expect((error as Error).message).toContain("nativeBackend");
  });
});

/** Whether a C compiler is here to build the seccomp launcher. */
function haveCc(): boolean {
  return spawnSync("cc", ["--version"], { stdio: "ignore" }).status === 0;
}

const seccompSkip =
  process.platform !== "linux"
    ? `seccomp is Linux's; this is ${process.platform}`
    : !haveCc()
      ? "no C compiler (cc) to build the seccomp launcher"
      : "";

describe.skipIf(seccompSkip !== "")(
  `where a seccomp filter refuses io_uring (EPERM)${seccompSkip ? ` (skipped: ${seccompSkip})` : ""}`,
  () => {
    it("the backend is unavailable, says why, and the epoll backend serves", () => {
      const dir = mkdtempSync(join(tmpdir(), "bobbin-no-uring-"));
      try {
        const launcher = join(dir, "no-uring");
        execFileSync("cc", ["-O2", "-o", launcher, here("./fixtures/no-uring.c")]);
        const out = execFileSync(launcher, [process.execPath, here("./fixtures/support-child.mjs")], {
          encoding: "utf8",
          timeout: 30_000,
        });
        const r = JSON.parse(out.trim().split("\n").pop()!) as {
          available: boolean;
          support: { available: boolean; reason: string };
          error: { name: string; code: string; reason: string } | null;
          nativeServed: boolean;
        };
        expect(r.available).toBe(false);
        expect(r.support.reason).toMatch(/EPERM|disabled|restricted/);
        expect(r.error).toMatchObject({ name: "UringUnavailable", code: "ERR_BOBBIN_URING_UNAVAILABLE", reason: r.support.reason });
        expect(r.nativeServed).toBe(true);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  },
);
