// The benchmark is not run by CI, so nothing else notices when a row stops measuring Bobbin: the
// kernel's rows once printed "FAILED: @bobbin/core lacks Trigger" for a whole day after the low-level
// names left core's main entry. This runs the rows that use the low-level entry, small, and fails on
// any row that could not run.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { loadBobbin } from "../src/harness.js";

const main = join(dirname(fileURLToPath(import.meta.url)), "../src/main.js");

describe("the kernel's rows", () => {
  it("load @bobbin/core and its low-level entry", async () => {
    const { B, L, error } = await loadBobbin();
    assert.equal(error, null);
    assert.equal(typeof B.run, "function");
    assert.equal(typeof L.Trigger, "function");
  });

  it("run every Bobbin row of fiber memory, traces and group cancellation (--quick)", { timeout: 180_000 }, () => {
    const out = execFileSync(process.execPath, ["--expose-gc", main, "--quick", "--only=memory,traces,group"], { encoding: "utf8" });
    assert.doesNotMatch(out, /FAILED/, out);
    assert.match(out, /Bobbin \(Trigger\.wait\): \d+ B/, out);
  });
});
