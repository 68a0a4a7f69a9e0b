// `main` exits its process: each test runs a program in a child process
// (test/fixtures/main-program.mjs, on the built package) and sends it real signals.

import { type ChildProcessByStdio, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { main } from "../src/index.js";

const PROGRAM = fileURLToPath(new URL("./fixtures/main-program.mjs", import.meta.url));
const BUILT = fileURLToPath(new URL("../dist/index.js", import.meta.url));

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The program running one scenario, its output so far, and how it ended. */
class Program {
  stdout = "";
  stderr = "";
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcessByStdio<null, Readable, Readable>;

  constructor(scenario: string) {
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run \`pnpm build\` (pnpm test builds first)`);
    this.child = spawn(process.execPath, [PROGRAM, scenario], { stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout.setEncoding("utf8").on("data", (s: string) => (this.stdout += s));
    this.child.stderr.setEncoding("utf8").on("data", (s: string) => (this.stderr += s));
    const killer = setTimeout(() => this.child.kill("SIGKILL"), 15_000);
    this.exited = new Promise((resolve) =>
      this.child.on("close", (code, signal) => {
        clearTimeout(killer);
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr });
      }),
    );
  }

  /** Waits until the program printed `line`. */
  async printed(line: string): Promise<void> {
    while (!this.stdout.split("\n").includes(line)) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`the program ended before printing ${line}: ${this.stdout}\n${this.stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

/** The numbers of the program's `EXIT <code> <sockets left> <socket handles left>` line. */
function exitLine(stdout: string): number[] {
  const m = stdout.match(/^EXIT (-?\d+) (-?\d+) (\d+)$/m);
  if (m === null) throw new Error(`no EXIT line in: ${stdout}`);
  return m.slice(1).map(Number);
}

/** Nothing left open: no socket descriptor (where they can be counted) and no socket handle. */
function expectNothingLeft(stdout: string): void {
  const [, sockets, handles] = exitLine(stdout);
  if (sockets !== -1) expect(sockets).toBe(0);
  expect(handles).toBe(0);
}

describe("main: how the program ends is the exit code", () => {
  it("returned: 0", async () => {
    const exit = await new Program("return").exited;
    expect(exit).toMatchObject({ code: 0, signal: null, stderr: "" });
    expect(exit.stdout).toMatch(/^ran\nEXIT 0 /);
    expectNothingLeft(exit.stdout);
  });

  it("failed: 1, with the error printed on stderr", async () => {
    const exit = await new Program("throw").exited;
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/Error: boom from the program\n\s+at /);
    expect(exitLine(exit.stdout)[0]).toBe(1);
  });

  it("returned after setting process.exitCode: that code", async () => {
    const exit = await new Program("exit-code").exited;
    expect(exit.code).toBe(3);
    expect(exitLine(exit.stdout)[0]).toBe(3);
  });

  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)(
    "%s cancels the program: its finally runs (and suspends) before the exit, with code %i, nothing left open",
    async (signal, code) => {
      const program = new Program("stop");
      await program.printed("READY");
      program.kill(signal);
      const exit = await program.exited;
      expect(exit).toMatchObject({ code, signal: null, stderr: "" });
      expect(exit.stdout).toMatch(new RegExp(`^READY\ncleaning up\ncleaned up\nEXIT ${code} `));
      expectNothingLeft(exit.stdout);
    },
  );

  it("a second signal during the cleanup exits at once, with its own code", async () => {
    const program = new Program("stuck");
    await program.printed("READY");
    program.kill("SIGINT");
    await program.printed("cleaning up");
    program.kill("SIGTERM");
    const exit = await program.exited;
    expect(exit).toMatchObject({ code: 143, signal: null, stderr: "" });
    expect(exit.stdout).toBe("READY\ncleaning up\n"); // no onExit: the cleanup never ended
  });

  it("a program with its own SIGINT handler stops itself: the first SIGINT goes to the handler, and it exits 0", async () => {
    const program = new Program("handled");
    await program.printed("READY");
    program.kill("SIGINT");
    const exit = await program.exited;
    expect(exit).toMatchObject({ code: 0, stderr: "" });
    expect(exit.stdout).toMatch(/^READY\nhandler: stopping\nstopped by its handler\nEXIT 0 /);
  });

  it("a program that only waits for Ctrl-C (a handler that broadcasts a Condition) stays alive until it comes: no Deadlock", async () => {
    const program = new Program("wait-for-signal");
    await program.printed("READY");
    await new Promise((resolve) => setTimeout(resolve, 300)); // a Deadlock would fail the run well within this
    program.kill("SIGINT");
    const exit = await program.exited;
    expect(exit).toMatchObject({ code: 0, stderr: "" });
    expect(exit.stdout).toMatch(/^READY\nstopped by its handler\nEXIT 0 /);
  });

  it("…and a second SIGINT still forces the exit", async () => {
    const program = new Program("stuck-handled");
    await program.printed("READY");
    program.kill("SIGINT");
    await program.printed("handler: stopping");
    program.kill("SIGINT");
    const exit = await program.exited;
    expect(exit).toMatchObject({ code: 130, stderr: "" });
    expect(exit.stdout).not.toMatch(/EXIT/);
  });
});

describe("main: misuse", () => {
  it("runs once per process: a second call is a TypeError", async () => {
    const exit = await new Program("twice").exited;
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/^second main: TypeError: main\(\) runs the program of this process, once/m);
  });

  it("rejects what is not a program, or bad options, before running anything", () => {
    const listeners = process.listenerCount("SIGINT");
    expect(thrownBy(() => main(42 as never))).toBeInstanceOf(TypeError);
    expect(thrownBy(() => main(function* () {}, null as never))).toBeInstanceOf(TypeError);
    expect(thrownBy(() => main(function* () {}, { onExit: 1 as never }))).toBeInstanceOf(TypeError);
    expect(thrownBy(() => main(function* () {}, { signal: {} as never }))).toBeInstanceOf(TypeError);
    expect(thrownBy(() => main(function* () {}, { backend: 1 as never }))).toBeInstanceOf(TypeError);
    expect(process.listenerCount("SIGINT")).toBe(listeners);
  });
});
