/**
 * Running an example program of dist/ in a child process: wait for a line
 * of its output, send it signals, collect what it printed and how it ended.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The absolute path of a built program, e.g. `dist("ch08-echo.js")`. */
export function dist(file: string): string {
  const path = fileURLToPath(new URL(`../../dist/${file}`, import.meta.url));
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`pnpm build\` (pnpm test builds first)`);
  return path;
}

/** How a program ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A program running in a child process. */
export class Program {
  stdout = "";
  stderr = "";
  readonly exited: Promise<Exit>;
  private waiters: (() => void)[] = [];

  private constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding("utf8").on("data", (s: string) => {
      this.stdout += s;
      this.notify();
    });
    child.stderr!.setEncoding("utf8").on("data", (s: string) => {
      this.stderr += s;
      this.notify();
    });
    this.exited = new Promise((resolve) => {
      child.on("close", (code, signal) => {
        this.notify();
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr });
      });
    });
  }

  /**
   * Starts `node dist/<file> ...args`; with `fdLimit`, under a shell's
   * `ulimit -n fdLimit` (the process may open no more file descriptors).
   */
  static start(file: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}, fdLimit?: number): Program {
    const argv = [process.execPath, dist(file), ...args];
    const [command, ...rest] = fdLimit === undefined ? argv : ["sh", "-c", `ulimit -n ${fdLimit} && exec "$0" "$@"`, ...argv];
    const child = spawn(command!, rest, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
    return new Program(child);
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Waits for a match of `pattern` in the output (stdout); rejects after `ms` or if the program exits first. */
  waitFor(pattern: RegExp, ms = 10_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${pattern} after ${ms} ms; stdout: ${this.stdout}\nstderr: ${this.stderr}`)), ms);
      const check = (): void => {
        const m = this.stdout.match(pattern);
        if (m !== null) {
          clearTimeout(timer);
          resolve(m);
        } else if (this.child.exitCode !== null || this.child.signalCode !== null) {
          clearTimeout(timer);
          reject(new Error(`the program exited before ${pattern}; stdout: ${this.stdout}\nstderr: ${this.stderr}`));
        } else this.waiters.push(check);
      };
      check();
    });
  }

  /** Waits for the program to end; kills it and rejects after `ms`. */
  async end(ms = 15_000): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill("SIGKILL");
        reject(new Error(`the program did not end within ${ms} ms; stdout: ${this.stdout}\nstderr: ${this.stderr}`));
      }, ms);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kills the program if it still runs (for `afterEach`). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

/** Runs a program to its end and returns how it ended. */
export function runProgram(file: string, args: readonly string[] = [], ms = 20_000): Promise<Exit> {
  return Program.start(file, args).end(ms);
}
