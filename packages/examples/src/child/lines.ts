/**
 * Running a command and reading its output line by line from fibers: the
 * child's stdin, stdout and stderr are Node streams, which `fromStream`
 * makes sockets; one task reads each output, while the parent feeds the
 * input and waits for the exit. Cancelling the parent (Ctrl-C under `main`,
 * a `withTimeout`) kills the child.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import * as B from "@bobbin/core";
import { fromStream, read, type Socket, shutdown, write } from "@bobbin/unix";

const NEWLINE = 0x0a;

/**
 * Reads `sock` to its end and calls `onLine` with each line, without its
 * newline (the last one may have none); lines are decoded as UTF-8 once
 * whole, so a character split across two reads stays whole. Returns how
 * many lines.
 *
 * @example
 * ```ts
 * const n = yield* eachLine(fromStream(child.stdout), (line) => console.log(`> ${line}`));
 * ```
 * @throws the errors of `read`.
 */
export function* eachLine(sock: Socket, onLine: (line: string) => void): Generator<B.Instruction, number, unknown> {
  const buf = Buffer.alloc(4096);
  let partial: Buffer[] = [];
  let lines = 0;
  for (let n: number; (n = yield* read(sock, buf)) > 0; ) {
    const chunk = buf.subarray(0, n);
    let start = 0;
    for (let end: number; (end = chunk.indexOf(NEWLINE, start)) !== -1; start = end + 1) {
      partial.push(chunk.subarray(start, end));
      onLine(Buffer.concat(partial).toString("utf8"));
      partial = [];
      lines++;
    }
    if (start < n) partial.push(Buffer.from(chunk.subarray(start))); // buf is read into again
  }
  if (partial.length !== 0) {
    onLine(Buffer.concat(partial).toString("utf8"));
    lines++;
  }
  return lines;
}

/** Which output of the child a line comes from. */
export type Output = "out" | "err";

/** How the command ended, and how many lines each output had. */
export interface CommandResult {
  /** The exit code, or `null` when a signal ended it. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly lines: Readonly<Record<Output, number>>;
}

/**
 * Runs `command` with `args`: writes `input` (if any) to its stdin and ends
 * it, calls `onLine` for each line of its stdout and stderr as they come,
 * and returns once both ended and the process exited. When the calling task
 * is cancelled (or times out), the child is killed.
 *
 * @example
 * ```ts
 * const { code } = yield* runCommand("ls", ["-l"], { onLine: (from, line) => console.log(`${from}| ${line}`) });
 * ```
 * @throws the error of starting the command (`ENOENT`…).
 */
export function* runCommand(
  command: string,
  args: readonly string[],
  options: { readonly input?: string; readonly onLine: (from: Output, line: string) => void },
): Generator<B.Instruction, CommandResult, unknown> {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
  const started = once(child, "spawn"); // or its error: ENOENT…
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  // Both are awaited below, unless the task is cancelled first.
  started.catch(() => undefined);
  exited.catch(() => undefined);
  using stdin = fromStream(child.stdin);
  using stdout = fromStream(child.stdout);
  using stderr = fromStream(child.stderr);
  const readers: B.Task<number>[] = [];
  try {
    yield* B.promise(() => started);
    const out = B.spawn(eachLine, stdout, (line: string) => options.onLine("out", line));
    const err = B.spawn(eachLine, stderr, (line: string) => options.onLine("err", line));
    readers.push(out, err);
    try {
      if (options.input !== undefined) yield* write(stdin, options.input);
      shutdown(stdin, "send");
    } catch (error) {
      // A command that exits without reading its input is not a failure of ours.
      if ((error as NodeJS.ErrnoException).code !== "EPIPE") throw error;
    }
    const lines = { out: yield* B.awaitExn(out), err: yield* B.awaitExn(err) };
    const [code, signal] = yield* B.promise(() => exited);
    return { code, signal, lines };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill();
    // The readers stop before `using` closes their sockets: a read of a closed
    // socket would fail them, and that error would be this task's outcome.
    for (const t of readers) if (t.status === "pending") yield* B.cancel(t);
  }
}
