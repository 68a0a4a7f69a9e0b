// The README block runner: how it reads markers, what module it makes of a block, how it
// judges a run, and, end to end on a README of its own, that it fails the blocks that fail.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { judge, matchesOutput, schedule } from "../readme-blocks/execute.mjs";
import { extractBlocks, MarkerError } from "../readme-blocks/extract.mjs";
import { moduleOf, planOf } from "../readme-blocks/generate.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const fence = "```";

describe("extractBlocks", () => {
  it("reads ts and js blocks with their markers and preludes, and skips other languages", () => {
    const text = [
      "# x",
      `${fence}sh`,
      "echo not code",
      fence,
      '<!-- block: fragment generator id=a no-run="needs two machines"',
      'import * as B from "@bobbin/core";',
      "-->",
      `${fence}ts`,
      "yield* B.yieldNow();",
      fence,
      "<!-- block: port=3000 -->",
      `${fence}js`,
      "console.log(1); // prints: 1",
      fence,
    ].join("\n");
    const [a, b, ...rest] = extractBlocks("R.md", text);
    assert.equal(rest.length, 0);
    assert.deepEqual([...a.words], ["fragment", "generator"]);
    assert.equal(a.keys.get("id"), "a");
    assert.equal(a.keys.get("no-run"), "needs two machines");
    assert.deepEqual(a.prelude, ['import * as B from "@bobbin/core";']);
    assert.equal(a.preludeLine, 6);
    assert.equal(a.line, 8);
    assert.deepEqual(a.code, ["yield* B.yieldNow();"]);
    assert.equal(b.lang, "js");
    assert.equal(b.keys.get("port"), "3000");
  });

  it("gives an output block to the code block before it, and strips a list item's indentation", () => {
    const text = ["- item", `  ${fence}ts`, "  console.log('x');", `  ${fence}`, "", "<!-- block: output -->", fence, "x", "…", fence].join(
      "\n",
    );
    const [block] = extractBlocks("R.md", text);
    assert.deepEqual(block.code, ["console.log('x');"]);
    assert.deepEqual(block.output, ["x", "…"]);
  });

  it("names the README line of a marker it cannot read", () => {
    assert.throws(
      () => extractBlocks("R.md", `<!-- block: fragmnet -->\n${fence}ts\n1;\n${fence}`),
      /R\.md:1: unknown marker word "fragmnet"/,
    );
    assert.throws(() => extractBlocks("R.md", `<!-- block: colour=red -->\n${fence}ts\n1;\n${fence}`), /unknown marker key "colour"/);
    assert.throws(() => extractBlocks("R.md", "<!-- block: fragment\nimport x;\n"), /R\.md:1: a marker that never closes/);
    assert.throws(() => extractBlocks("R.md", `<!-- block: fragment -->\n${fence}sh\nls\n${fence}`), MarkerError);
    assert.throws(
      () => extractBlocks("R.md", `<!-- block: output -->\n${fence}\nx\n${fence}`),
      /an output block with no code block before it/,
    );
  });
});

/** The one block of a README made of `lines`. */
const blockOf = (...lines) => extractBlocks("R.md", lines.join("\n"));

describe("planOf", () => {
  it("runs a block by default, and takes its expected output from `// prints:` comments", () => {
    const [block] = blockOf(`${fence}ts`, 'console.log("a"); // prints: a', "f(); // prints: b c", fence);
    const plan = planOf(block);
    assert.equal(plan.run, true);
    assert.deepEqual(plan.expected, ["a", "b c"]);
    assert.equal(plan.exit, 0);
    assert.equal(plan.module, "main.ts");
  });

  it("only type-checks fragments and no-run blocks, saying why", () => {
    assert.deepEqual(
      [
        planOf(blockOf("<!-- block: fragment -->", `${fence}ts`, "x;", fence)[0]),
        planOf(blockOf('<!-- block: no-run="GitHub only" -->', `${fence}ts`, "x;", fence)[0]),
      ].map((p) => [p.run, p.why]),
      [
        [false, "a fragment"],
        [false, "GitHub only"],
      ],
    );
  });

  it("refuses markers that contradict each other", () => {
    const plan =
      (...lines) =>
      () =>
        planOf(blockOf(...lines)[0]);
    assert.throws(plan('<!-- block: fragment no-run="x" -->', `${fence}ts`, "x;", fence), /fragment or no-run, not both/);
    assert.throws(plan("<!-- block: fragment exit=1 -->", `${fence}ts`, "x;", fence), /"exit" is for blocks that run/);
    assert.throws(plan("<!-- block: fragment -->", `${fence}ts`, "f(); // prints: 1", fence), /cannot have an expected output/);
    assert.throws(plan(`${fence}ts`, "f(); // prints: 1", fence, "<!-- block: output -->", fence, "1", fence), /not both/);
  });
});

describe("moduleOf", () => {
  it("makes a generator block the body of `function* block()`, its imports and declares above, every line mapped", () => {
    const blocks = blockOf(
      "<!-- block: generator",
      'import * as B from "@bobbin/core";',
      "declare const t: B.Task<number>;",
      "const n = 1;",
      "-->",
      `${fence}ts`,
      'import { sleep } from "@bobbin/unix";',
      "yield* sleep(n);",
      fence,
    );
    const { lines, files, path } = moduleOf(blocks[0], blocks, planOf(blocks[0]));
    assert.equal(path, undefined);
    assert.deepEqual(files, []);
    const text = lines.map((l) => l.text.trimEnd());
    assert.deepEqual(text.slice(0, 4), [
      'import { run as runReadmeBlock } from "@bobbin/unix";',
      'import * as B from "@bobbin/core";',
      "declare const t: B.Task<number>;",
      'import { sleep } from "@bobbin/unix";',
    ]);
    const body = text.indexOf("export function* block() {");
    assert.ok(body > 0);
    assert.ok(text.indexOf("const n = 1;") > body && text.indexOf("yield* sleep(n);") > body);
    assert.equal(lines.find((l) => l.text === "yield* sleep(n);").from, "R.md:8");
    assert.equal(lines.find((l) => l.text.startsWith("declare")).from, "R.md:3");
    assert.deepEqual(text.slice(-2), ["await runReadmeBlock(block);", "export {};"]);
  });

  it("puts included blocks first, and splits `// file:` sections into the files beside the last one", () => {
    const blocks = blockOf(
      "<!-- block: id=base -->",
      `${fence}ts`,
      "const base = 1;",
      fence,
      "<!-- block: with=base",
      "// file: helper.ts",
      "export const h = 2;",
      "-->",
      `${fence}ts`,
      "// file: tasks.ts",
      "export const t = 3;",
      "// file: main.ts — the entry",
      'import { t } from "./tasks.js";',
      fence,
    );
    const { lines, files, path } = moduleOf(blocks[1], blocks, planOf(blocks[1]));
    assert.equal(path, "main.ts");
    assert.deepEqual(
      files.map((f) => [f.path, f.lines.map((l) => l.text)]),
      [
        ["helper.ts", ["// file: helper.ts", "export const h = 2;"]],
        ["tasks.ts", ["// file: tasks.ts", "export const t = 3;"]],
      ],
    );
    assert.deepEqual(
      lines.map((l) => l.text),
      ["const base = 1;", "// file: main.ts — the entry", 'import { t } from "./tasks.js";', "export {};"],
    );
    assert.throws(
      () => moduleOf({ ...blocks[1], keys: new Map([["with", "nope"]]) }, blocks, planOf(blocks[1])),
      /no block of this README has id=nope/,
    );
  });
});

describe("judging a run", () => {
  it("matches output line by line, `…` standing for any number of lines", () => {
    assert.ok(matchesOutput(["a", "…", "d"], ["a", "b", "c", "d", ""]));
    assert.ok(matchesOutput(["a", "…"], ["a"]));
    assert.ok(!matchesOutput(["a", "…", "d"], ["a", "b", "c"]));
    assert.ok(!matchesOutput(["a"], ["a", "b"]));
    assert.ok(matchesOutput(["a  "], ["a"]));
  });

  it("fails a run that times out, exits otherwise than planned, misses its error or prints something else", () => {
    const plan = { exit: 0, expected: ["ok"] };
    const run = (over) => ({ code: 0, signal: null, stdout: "ok\n", stderr: "", timedOut: false, ...over });
    assert.equal(judge(plan, run({}), 1000), null);
    assert.match(judge(plan, run({ timedOut: true }), 1000), /did not end within 1 s/);
    assert.match(judge(plan, run({ code: 1, stderr: "Error: boom" }), 1000), /exited 1, expected exit code 0; its stderr:\nError: boom/);
    assert.match(judge(plan, run({ stdout: "no\n" }), 1000), /printed:\nno\nbut its README shows:\nok/);
    assert.equal(judge({ throws: "boom" }, run({ code: 1, stderr: "Error: boom" }), 1000), null);
    assert.match(judge({ throws: "boom" }, run({}), 1000), /should have failed with "boom", but exited 0/);
    assert.match(judge({ throws: "boom" }, run({ code: 1, stderr: "other" }), 1000), /should have failed with "boom"/);
  });

  it("runs jobs a few at a time, never two with the same port at once", async () => {
    let running = 0;
    let most = 0;
    const onPort = new Set();
    const job = (port) => ({
      port,
      start: async () => {
        running++;
        most = Math.max(most, running);
        if (port !== undefined) {
          assert.ok(!onPort.has(port), `two jobs on port ${port} at once`);
          onPort.add(port);
        }
        await new Promise((r) => setTimeout(r, 10));
        onPort.delete(port);
        running--;
        return port ?? "none";
      },
    });
    const results = await schedule([job("3000"), job("3000"), job(undefined), job("3000"), job(undefined)], 2);
    assert.deepEqual(results, ["3000", "3000", "none", "3000", "none"]);
    assert.equal(most, 2);
  });
});

describe("the runner, end to end", () => {
  it("passes the blocks that do what their README says and fails, by README line, those that do not", { timeout: 120_000 }, () => {
    const repo = mkdtempSync(join(tmpdir(), "readme-blocks-"));
    try {
      // A workspace of one public package, built, and a README whose blocks use it.
      mkdirSync(join(repo, "packages/greet/dist"), { recursive: true });
      mkdirSync(join(repo, "node_modules"), { recursive: true });
      symlinkSync(join(root, "node_modules/@types"), join(repo, "node_modules/@types"), "dir");
      const pkg = { name: "@demo/greet", type: "module", exports: { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } } };
      writeFileSync(join(repo, "packages/greet/package.json"), JSON.stringify(pkg));
      writeFileSync(join(repo, "packages/greet/dist/index.js"), 'export const greet = (name) => "hello, " + name;\n');
      writeFileSync(join(repo, "packages/greet/dist/index.d.ts"), "export declare const greet: (name: string) => string;\n");
      writeFileSync(
        join(repo, "README.md"),
        [
          "A block that prints what it shows:",
          `${fence}ts`,
          'import { greet } from "@demo/greet";',
          'console.log(greet("you")); // prints: hello, you',
          fence,
          "One that does not type-check:",
          `${fence}ts`,
          'import { greet } from "@demo/greet";',
          "greet(42);",
          fence,
          "One that prints something else:",
          `${fence}ts`,
          'console.log("hi"); // prints: bye',
          fence,
          "One that never ends:",
          "<!-- block: timeout=1 -->",
          `${fence}ts`,
          "setInterval(() => {}, 1000);",
          fence,
          "A fragment:",
          "<!-- block: fragment",
          "declare const name: string;",
          "-->",
          `${fence}ts`,
          "name.toUpperCase();",
          fence,
        ].join("\n"),
      );
      const run = spawnSync(process.execPath, [join(root, "scripts/readme-blocks.mjs"), `--root=${repo}`], { encoding: "utf8" });
      assert.equal(run.status, 1, run.stderr);
      const lines = run.stdout.split("\n");
      const line = (at) => lines.find((l) => l.includes(`README.md:${at} `)) ?? "";
      assert.match(line(2), /^ok {3}README\.md:2 — ran/);
      assert.match(line(7), /^FAIL README\.md:7 — type errors:/);
      assert.match(run.stdout, /README\.md:9: TS2345: Argument of type 'number' is not assignable to parameter of type 'string'/);
      assert.match(line(12), /^FAIL README\.md:12 — printed:/);
      assert.match(line(17), /^FAIL README\.md:17 — did not end within 1 s/);
      assert.match(line(24), /^ok {3}README\.md:24 — type-checked; not run: a fragment/);
      assert.match(run.stdout, /^2 passed, 3 failed$/m);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
