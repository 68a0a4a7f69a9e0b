// The flight recorder's row judges its target by the median of per-round ratios to "recorder off"
// (recorder.js): a round slowed by another process's load moves both rows of that round, not the
// median of one row alone.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { computeRatios } from "../src/harness.js";
import { contenders, pairWithOff, pooled, SCENARIO } from "../src/recorder.js";

/** The scenario's rows as `runContenders` makes them, with these samples (CPU ns per child, by round). */
function rows(samples) {
  const fn = () => 0;
  return contenders({ B: { chromeTrace: fn, run: fn }, bobbinError: null }).map((c) => ({
    scenario: SCENARIO,
    contender: c.contender,
    anchor: c.anchor,
    targetSpec: c.targetSpec,
    note: "",
    samples: samples[c.contender],
    perOp: [...samples[c.contender]].sort((a, b) => a - b)[1],
  }));
}

describe("the flight recorder's row", () => {
  const off = [100, 200, 400];
  const samples = {
    "async/await": [60, 60, 60],
    "Bobbin, recorder off": off,
    "Bobbin, recorder off (A/A)": [101, 199, 402],
    "Bobbin, flightRecorder: 4096": [110, 420, 200], // 1.10, 2.10, 0.50 per round; its median is off's
    "Bobbin, blockingMs: 100": [120, 240, 480],
  };

  it("rates each row against recorder off by the median of per-round ratios", () => {
    const table = rows(samples);
    pairWithOff(table);
    const paired = Object.fromEntries(table.map((r) => [r.contender, r.paired]));
    assert.equal(paired["async/await"], undefined);
    assert.equal(paired["Bobbin, recorder off"], undefined);
    assert.ok(Math.abs(paired["Bobbin, recorder off (A/A)"] - 1.005) < 1e-9);
    assert.ok(Math.abs(paired["Bobbin, flightRecorder: 4096"] - 1.1) < 1e-9);
    assert.ok(Math.abs(paired["Bobbin, blockingMs: 100"] - 1.2) < 1e-9);
    assert.match(table.find((r) => r.contender === "Bobbin, flightRecorder: 4096").note, /^1\.10× recorder off/);
  });

  it("misses the target by that ratio, where the ratio of the medians would pass", () => {
    const table = rows(samples);
    pairWithOff(table);
    computeRatios(table);
    const on = table.find((r) => r.contender === "Bobbin, flightRecorder: 4096");
    assert.equal(on.vs.off, 1);
    assert.equal(on.target.pass, false);
    const within = rows({ ...samples, "Bobbin, flightRecorder: 4096": [104, 206, 416] });
    pairWithOff(within);
    computeRatios(within);
    assert.equal(within.find((r) => r.contender === "Bobbin, flightRecorder: 4096").target.pass, true);
  });

  it("pools the rounds of its processes, pairing each round with the same round of recorder off", () => {
    // Two processes: in the first the recorder costs 10% of a fast round, in the second its code
    // was compiled worse and every round of both rows is slower.
    const one = rows({ ...samples, "Bobbin, recorder off": [100, 100, 100], "Bobbin, flightRecorder: 4096": [110, 110, 110] });
    const two = rows({ ...samples, "Bobbin, recorder off": [300, 300, 300], "Bobbin, flightRecorder: 4096": [303, 303, 303] });
    const table = pooled([one, two]);
    const on = table.find((r) => r.contender === "Bobbin, flightRecorder: 4096");
    assert.deepEqual(on.samples, [110, 110, 110, 303, 303, 303]);
    assert.equal(on.perOp, (110 + 303) / 2);
    pairWithOff(table);
    assert.ok(Math.abs(on.paired - (1.1 + 1.01) / 2) < 1e-9); // per round, not 206.5 / 200
    const failed = pooled([one, two.map((r) => (r.contender === "Bobbin, recorder off" ? { ...r, error: "boom" } : r))]);
    assert.equal(failed.find((r) => r.contender === "Bobbin, recorder off").error, "boom");
  });
});
