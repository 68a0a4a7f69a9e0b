/**
 * The suite's child process: `emfile-child.js`, run by `node` under a
 * shell's `ulimit -n`, with the backend the options name; its stdout read
 * line by line.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { ConformanceOptions } from "./context.js";

/**
 * The child script, always the built one: this module is
 * `<package>/src/conformance/` in the repository's own tests and
 * `<package>/dist/conformance/` once published, and both are two levels
 * below the package, whose `dist/conformance/` holds the script.
 */
const SCRIPT = fileURLToPath(new URL("../../dist/conformance/emfile-child.js", import.meta.url));

/** @internal The child, running the backend under a descriptor limit, and its output. */
export class Child {
  private readonly proc: ChildProcessByStdio<null, Readable, Readable>;
  private readonly lines: string[] = [];
  private readonly waiters: [string, (line: string) => void][] = [];
  private stderr = "";
  /** The lines seen so far, in order (those taken by `next` too). */
  readonly seen: string[] = [];
  /** Settles with the exit code. */
  readonly exited: Promise<number | null>;

  constructor(backend: NonNullable<ConformanceOptions["childProcess"]>, fdLimit: number) {
    const argv = [...(backend.execArgv ?? []), SCRIPT, backend.module, backend.export];
    this.proc = spawn("sh", ["-c", `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, ...argv], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.proc.stderr.on("data", (d: Buffer) => (this.stderr += d.toString()));
    createInterface({ input: this.proc.stdout }).on("line", (line) => {
      this.seen.push(line);
      const i = this.waiters.findIndex(([prefix]) => line.startsWith(prefix));
      if (i >= 0) this.waiters.splice(i, 1)[0]![1](line);
      else this.lines.push(line);
    });
    this.exited = new Promise((resolve) => this.proc.on("exit", resolve));
  }

  /** The next line starting with `prefix`; rejects after `ms`. */
  next(prefix: string, ms = 10_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const j = this.lines.findIndex((l) => l.startsWith(prefix));
      if (j >= 0) return resolve(this.lines.splice(j, 1)[0]!);
      const timer = setTimeout(() => reject(new Error(`no ${prefix} line from the child process; stderr: ${this.stderr}`)), ms);
      this.waiters.push([
        prefix,
        (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      ]);
    });
  }

  kill(signal: NodeJS.Signals): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
  }
}
