/** Traces across domains: an error a parallel task threw carries the line of the call's task in its caller. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as B from "../../dist-dev/index.js";
import * as F from "../fixtures/parallel-tasks.mjs";

const file = fileURLToPath(import.meta.url);
const line =
  readFileSync(file, "utf8")
    .split("\n")
    .findIndex((l) => l.endsWith("// the call")) + 1;
const at = `${file.slice(process.cwd().length + 1)}:${line}`;

describe.each([
  ["worker threads", { domains: 1, traces: true }],
  ["simulated domains", { domains: 1, simulateDomains: true, traces: true }],
] as const)("traces on %s", (_, options) => {
  it("an error thrown by a called task says where the call was made and awaited", async () => {
    const stack = await B.run(function* () {
      try {
        yield* B.awaitExn(B.call(F.fail, "no")); // the call
      } catch (error) {
        return (error as Error).stack!;
      }
      return "";
    }, options);
    expect(stack).toMatch(/^RangeError: no\n/);
    expect(stack).toContain(`\n    at task fail#2 (spawned at ${at}), awaited at ${at}`);
  });

  it("a failure a worker reports both as the run's and as the call's outcome is one failure, whatever tasks each copy crossed", async () => {
    await expect(
      B.run(function* () {
        yield* B.awaitTask(B.call(F.forgetsChild));
      }, options),
    ).rejects.toBeInstanceOf(B.StillHasChildren);
  });
});
