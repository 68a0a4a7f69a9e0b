import { PassThrough } from "node:stream";
import * as B from "@bobbin/core";
import { delay, processGone as gone } from "@bobbin/test-support";
import { fromStream, run, sleep } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { eachLine, type Output, runCommand } from "../../src/child/lines.js";
import { Program, runProgram } from "../support/processes.js";

/** `node -e script` as a command. */
const node = (script: string): [string, string[]] => [process.execPath, ["-e", script]];

describe("eachLine", () => {
  it("cuts lines across reads, keeps characters split between two reads whole, and gives a last line without its newline", async () => {
    const lines = await run(function* () {
      const pipe = new PassThrough();
      using sock = fromStream(pipe);
      const seen: string[] = [];
      const reader = B.spawn(eachLine, sock, (line: string) => seen.push(line));
      const text = Buffer.from("one\ntw\u00e9\n\nthree\nlast, no newline", "utf8");
      for (const [from, to] of [
        [0, 2],
        [2, 7], // "tw" and the first byte of "é"
        [7, 9],
        [9, text.length],
      ] as const) {
        pipe.write(text.subarray(from, to));
        yield* B.yieldNow();
      }
      pipe.end();
      expect(yield* B.awaitExn(reader)).toBe(5);
      return seen;
    });
    expect(lines).toEqual(["one", "twé", "", "three", "last, no newline"]);
  });
});

describe("runCommand", () => {
  it("reads stdout and stderr as they come, feeds stdin, and says how the command ended", async () => {
    const seen: [Output, string][] = [];
    const result = await run(function* () {
      const [cmd, args] = node(
        "process.stdin.on('data', (d) => process.stdout.write(String(d).toUpperCase())); process.stdin.on('end', () => { console.error('done'); process.exitCode = 4; })",
      );
      return yield* runCommand(cmd, args, { input: "a\nb\n", onLine: (from, line) => seen.push([from, line]) });
    });
    expect(result).toEqual({ code: 4, signal: null, lines: { out: 2, err: 1 } });
    expect(seen.filter(([from]) => from === "out")).toEqual([
      ["out", "A"],
      ["out", "B"],
    ]);
    expect(seen.filter(([from]) => from === "err")).toEqual([["err", "done"]]);
  });

  it("a command that does not read its input is not an error", async () => {
    const result = await run(function* () {
      const [cmd, args] = node("process.stdout.write('ignored you')");
      return yield* runCommand(cmd, args, { input: "x".repeat(1 << 20), onLine: () => {} });
    });
    expect(result.code).toBe(0);
  });

  it("cancelled, it kills the command", async () => {
    const pid = await run(function* () {
      let pid = 0;
      const [cmd, args] = node("console.log(process.pid); setInterval(() => {}, 1000)");
      const running = B.spawn(runCommand, cmd, args, { onLine: (_: Output, line: string) => (pid = Number(line)) });
      while (pid === 0) yield* sleep(0.01);
      yield* B.cancel(running);
      return pid;
    });
    for (let i = 0; i < 100 && !gone(pid); i++) await delay(20);
    expect(gone(pid)).toBe(true);
  });

  it("a command that cannot start: its error (ENOENT)", async () => {
    const code = await run(function* () {
      try {
        yield* runCommand("bobbin-no-such-command", [], { onLine: () => {} });
        return "started";
      } catch (error) {
        return (error as NodeJS.ErrnoException).code;
      }
    });
    expect(code).toBe("ENOENT");
  });
});

describe("node dist/child-lines.js", () => {
  it("prints each line with where it came from, then how the command ended, and exits with its code", async () => {
    const exit = await runProgram("child-lines.js", [
      "--",
      ...node("console.log('first'); console.error('oops'); console.log('second'); process.exit(3)").flat(),
    ]);
    expect(exit.code).toBe(3);
    expect(exit.stderr).toBe("");
    const lines = exit.stdout.split("\n");
    expect(lines.filter((l) => l.startsWith("out "))).toEqual(["out 1| first", "out 2| second"]);
    expect(lines.filter((l) => l.startsWith("err "))).toEqual(["err 1| oops"]);
    expect(exit.stdout).toMatch(/: exit code 3; 2 line\(s\) on stdout, 1 on stderr\n$/);
  });

  it("--input feeds the command's stdin", async () => {
    const exit = await runProgram("child-lines.js", ["--input", "x\ny\n", "--", ...node("process.stdin.pipe(process.stdout)").flat()]);
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/^out 1\| x\nout 2\| y\n/);
  });

  it("Ctrl-C (SIGINT) stops it and kills the command: exit code 130", async () => {
    const program = Program.start("child-lines.js", ["--", ...node("console.log(process.pid); setInterval(() => {}, 1000)").flat()]);
    try {
      const [, pid] = await program.waitFor(/^out 1\| (\d+)$/m);
      program.child.kill("SIGINT");
      const exit = await program.end();
      expect(exit.code).toBe(130);
      expect(exit.stderr).toBe("");
      for (let i = 0; i < 100 && !gone(Number(pid)); i++) await delay(20);
      expect(gone(Number(pid))).toBe(true);
    } finally {
      program.kill();
    }
  });

  it("--timeout: the Timeout is the program's error (exit code 1), and the command is killed", async () => {
    const program = Program.start("child-lines.js", [
      "--timeout",
      "2",
      "--",
      ...node("console.log(process.pid); setInterval(() => {}, 1000)").flat(),
    ]);
    try {
      const [, pid] = await program.waitFor(/^out 1\| (\d+)$/m);
      const exit = await program.end();
      expect(exit.code).toBe(1);
      expect(exit.stderr).toMatch(/Timeout: the operation did not finish within 2 s/);
      for (let i = 0; i < 100 && !gone(Number(pid)); i++) await delay(20);
      expect(gone(Number(pid))).toBe(true);
    } finally {
      program.kill();
    }
  });
});
