// http.js's table: ratios are to plain Node `http` (the anchor); modes run without it
// (`--modes=bobbin:libuv,fastify`) print their own figures, the ratios and verdicts left blank.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { httpTable } from "../src/http.js";

const libuv = { rps: 9000, cpuPerRt: 45, samples: [] };
const fastify = { rps: 8000, cpuPerRt: 50, samples: [] };

describe("the HTTP table", () => {
  it("gives each mode's ratios to Node http when it ran", () => {
    const table = httpTable({ node: { rps: 10000, cpuPerRt: 40, samples: [] }, "bobbin:libuv": libuv });
    assert.match(table, /\| @bobbin\/http, libuv backend \| 9,000 \| 0\.90× \| 45\.00 µs \| 1\.13× \| ≥ 0\.9× → PASS \|/);
  });

  it("prints the figures without ratios when the modes left Node http out", () => {
    const table = httpTable({ "bobbin:libuv": libuv, fastify });
    assert.match(table, /\| @bobbin\/http, libuv backend \| 9,000 \| — \| 45\.00 µs \| — \| no anchor: run with node \|/);
    assert.match(table, /\| Fastify \| 8,000 \| — \| 50\.00 µs \| — \| {2}\|/);
  });
});

describe("wrk's duration", () => {
  it("is whole seconds, at least the window asked for (wrk refuses -d1.5s)", async () => {
    const { wrkDuration } = await import("../src/http.js");
    assert.deepEqual([0.5, 1, 1.5, 3].map(wrkDuration), ["1s", "1s", "2s", "3s"]);
  });
});

describe("the HTTP modes", () => {
  it("refuses an unknown mode at once, naming the modes there are", async () => {
    const { measureHttp } = await import("../src/http.js");
    await assert.rejects(
      measureHttp({ modes: ["node", "bobbin:epoll"] }),
      /unknown mode\(s\) bobbin:epoll; the modes are node, bobbin:libuv/,
    );
  });
});
