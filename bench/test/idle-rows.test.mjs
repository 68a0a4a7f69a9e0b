// The idle rows of native-echo.js compare a checkout's Bobbin with another's (modes before:…,
// BOBBIN_BEFORE=<checkout>). Their servers once ran this checkout's build whatever BOBBIN_BEFORE said,
// so "before" and "after" printed the same numbers. A before: server must load the other checkout: one
// that is not there fails the row.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const script = join(dirname(fileURLToPath(import.meta.url)), "../src/native-echo.js");

describe("the idle rows", () => {
  it("run a before: server on BOBBIN_BEFORE's Bobbin (a checkout that is not there fails the row)", { timeout: 60_000 }, () => {
    const missing = join(dirname(script), "no-such-checkout");
    const run = spawnSync(process.execPath, [script, "--only=idle", "--idle=8", "--idle-modes=before:libuv-chunk"], {
      encoding: "utf8",
      env: { ...process.env, BOBBIN_BEFORE: missing },
      timeout: 50_000,
    });
    assert.notEqual(run.status, 0, run.stdout);
    assert.match(run.stderr, /no-such-checkout/, run.stderr);
  });
});
