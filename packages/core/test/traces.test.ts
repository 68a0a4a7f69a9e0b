/**
 * Traces across tasks (`run({ traces })`): an error a task takes from a child
 * carries a line per task it crossed, with where each was spawned and
 * awaited; dumps say where waiting tasks wait.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";

const file = fileURLToPath(import.meta.url);
const source = readFileSync(file, "utf8").split("\n");
const relative = file.slice(process.cwd().length + 1);
/** `file:line` of the line of this file holding `marker` (a comment). */
const at = (marker: string): string => `${relative}:${source.findIndex((l) => l.endsWith(`// ${marker}`)) + 1}`;

function* decode(): Generator<B.Instruction, never, unknown> {
  yield* B.yieldNow();
  throw new RangeError("bad byte");
}

function* parse(): Generator<B.Instruction, number, unknown> {
  const child = B.spawn(decode); // spawn decode
  yield* B.yieldNow();
  return yield* B.awaitExn(child); // await decode
}

function* handler(): Generator<B.Instruction, number, unknown> {
  const child = B.spawn(parse); // spawn parse
  return yield* B.awaitExn(child); // await parse
}

function* main(): Generator<B.Instruction, string, unknown> {
  try {
    yield* B.awaitExn(B.spawn(handler)); // spawn and await handler
  } catch (error) {
    return (error as Error).stack!;
  }
  return "no error";
}

describe("traces across tasks", () => {
  it("an error crossing three tasks carries a line for each: its name, where it was spawned and where it was awaited", async () => {
    const stack = await B.run(main, { traces: true });
    const lines = stack.split("\n");
    expect(lines[0]).toBe("RangeError: bad byte");
    const tasks = lines.filter((l) => l.startsWith("    at task "));
    expect(tasks).toEqual([
      `    at task decode#4 (spawned at ${at("spawn decode")}), awaited at ${at("await decode")}`,
      `    at task parse#3 (spawned at ${at("spawn parse")}), awaited at ${at("await parse")}`,
      `    at task handler#2 (spawned at ${at("spawn and await handler")}), awaited at ${at("spawn and await handler")}`,
    ]);
    // After the frames of the throw, in the order the error crossed the tasks.
    expect(lines.indexOf(tasks[0]!)).toBeGreaterThan(lines.findIndex((l) => l.includes("at decode")));
  });

  it("off, the error is left as thrown", async () => {
    const stack = await B.run(main, { traces: false });
    expect(stack).not.toContain("at task ");
  });

  it("awaitAll, awaitTask, a group and a combinator add the failed child's line too", async () => {
    const stacks = await B.run(
      function* () {
        const out: string[] = [];
        const results = yield* B.awaitAll([B.spawn(decode)]); // spawn for awaitAll
        out.push((results[0] as { error: Error }).error.stack!);
        const result = yield* B.awaitTask(B.spawn(decode)); // spawn for awaitTask
        out.push((result as { error: Error }).error.stack!);
        try {
          yield* B.group(function* (g) {
            g.spawn(decode); // spawn in a group
          });
        } catch (error) {
          out.push((error as Error).stack!);
        }
        try {
          yield* B.all([
            L.done(1),
            {
              *[Symbol.iterator]() {
                return yield* decode();
              },
            },
          ]);
        } catch (error) {
          out.push((error as Error).stack!);
        }
        return out;
      },
      { traces: true },
    );
    expect(stacks[0]).toContain(`    at task decode#2 (spawned at ${at("spawn for awaitAll")}), awaited at ${at("spawn for awaitAll")}`);
    expect(stacks[1]).toContain(`    at task decode#3 (spawned at ${at("spawn for awaitTask")}), awaited at ${at("spawn for awaitTask")}`);
    expect(stacks[2]).toMatch(new RegExp(`\\n    at task decode#\\d+ \\(spawned at ${at("spawn in a group").replace(/[.]/g, "\\.")}\\)`));
    expect(stacks[3]).toMatch(/\n {4}at task all\[1\]#\d+/);
  });

  it("a dump shows where each waiting task waits", async () => {
    const text = await B.run(
      function* () {
        const trigger = new L.Trigger();
        const sleeper = B.spawn(function* sleeper() {
          yield* trigger.wait(); // the sleeper waits
        });
        yield* B.yieldNow();
        const dump = B.formatDump(yield* B.promise(() => B.dump()));
        trigger.signal();
        yield* B.awaitExn(sleeper);
        return dump;
      },
      { traces: true },
    );
    expect(text).toContain(`sleeper#2 — waiting: wait on a trigger (at ${at("the sleeper waits")})`);
  });

  it("refuses a switch that is not a boolean, and a BOBBIN_TRACES that is neither 1 nor 0", async () => {
    expect(() => B.run(main, { traces: "yes" as never })).toThrow(/run\(\{ traces \}\) expects true or false, got "yes"/);
    const before = process.env.BOBBIN_TRACES;
    process.env.BOBBIN_TRACES = "on";
    try {
      expect(() => B.run(main)).toThrow(/BOBBIN_TRACES must be 1 \(keep traces\) or 0 \(keep none\), got "on"/);
      process.env.BOBBIN_TRACES = "0";
      expect(await B.run(main)).not.toContain("at task ");
    } finally {
      if (before === undefined) delete process.env.BOBBIN_TRACES;
      else process.env.BOBBIN_TRACES = before;
    }
  });
});
