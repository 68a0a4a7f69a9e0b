// The idle rows of native-echo.js compare a checkout's Bobbin with another's (modes before:…,
// BOBBIN_BEFORE=<checkout>). Their servers once ran this checkout's build whatever BOBBIN_BEFORE said,
// so "before" and "after" printed the same numbers. A before: server must load the other checkout: one
// that is not there fails the row.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { computeRatios } from "../src/harness.js";
import { idleRows, idleSummary } from "../src/native-echo.js";

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

// A readChunk row's target is judged by the median of its per-round ratios to net's RSS per
// connection (the servers alternate, so one round's load or collection moves both of its readings),
// not by the ratio of the two medians, which one noisy round of either server decides.
describe("the idle rows' targets", () => {
  const round = (rssPerConn) => ({ rssPerConn, heapPerConn: 1000, youngPerConn: 500 });
  // libuv-chunk against net by round: 1.30, 1.03, 1.23 (the median); the ratio of the medians, 3100 / 2600, is 1.19.
  const runs = { "libuv-chunk": [2600, 3100, 3200].map(round), net: [2000, 3000, 2600].map(round) };

  it("are the median of per-round ratios to net, printed in the row's note", () => {
    const summary = idleSummary(runs);
    assert.equal(summary["libuv-chunk"].vsNet, 3200 / 2600);
    assert.equal(summary["libuv-chunk"].rssPerConn, 3100);
    assert.equal(summary.net.vsNet, undefined);
    const rows = idleRows(summary, 10_000);
    computeRatios(rows);
    const libuv = rows.find((r) => r.contender === "libuv-chunk");
    assert.ok(libuv.vs.net < 1.2, `the ratio of the medians, ${libuv.vs.net}, would pass`);
    assert.equal(libuv.target.pass, false);
    assert.match(libuv.note, /1\.23× net's \(the median of per-round ratios\)/);
    assert.match(libuv.note, /young generation 500 B; JS heap \+ external 1000 B/);
    assert.equal(rows.find((r) => r.contender === "net").target ?? null, null);
  });
});
