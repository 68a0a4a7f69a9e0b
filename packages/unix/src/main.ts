/**
 * `main`: the entry point of a program. It runs the program as the root
 * task of `run`, stops it on SIGINT or SIGTERM by cancelling it (so every
 * `finally` runs, however it suspends), and exits the process with the code
 * Unix expects: 0, 1 with the error printed, or 128 + the signal's number.
 */
import { constants } from "node:os";
import { inspect } from "node:util";
import type * as B from "@bobbin/core";
import { describe } from "@bobbin/core/lowlevel";
import { type RunOptions, run } from "./run.js";
import { currentContext, type SignalTable } from "./signals.js";

/**
 * Options of {@link main}: those of `run` (backend, seed, domains…), and
 * `onExit`.
 *
 * @example
 * ```ts
 * main(server, { backend: native, onExit: (code) => console.log(`exiting with ${code}`) });
 * ```
 */
export interface MainOptions extends RunOptions {
  /**
   * Called once the program is over — every `finally` has run, every
   * handle of the backend is released — with the exit code `main` chose,
   * just before the process exits with it (what it writes to stdout and
   * stderr is flushed first). For a program that returned, setting
   * `process.exitCode` here (or in the program) changes the code. Not called
   * when a second signal forces the exit.
   */
  readonly onExit?: ((code: number) => void) | undefined;
}

/** The signals that stop a program run by `main`. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM"];

let started = false;

/** A process killed by `signal` exits with 128 + its number (130 for SIGINT, 143 for SIGTERM). */
function exitCodeOf(signal: NodeJS.Signals): number {
  return 128 + constants.signals[signal];
}

/** Resolves once what was written to `stream` before has been handed to the system. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) resolve();
    else stream.write("", () => resolve());
  });
}

/**
 * Runs a program: `fn` is the root task of a `run` of `@bobbin/unix` (with
 * `options`), and the process exits when it is over, once every `finally`
 * has run and every handle of the backend is released:
 *
 * - `fn` returned: exit code 0 (or `process.exitCode`, if the program set it);
 * - `fn` (or the run) failed: the error is printed on stderr, exit code 1;
 * - SIGINT or SIGTERM arrived: `fn` is cancelled — its `finally` blocks run
 *   and may suspend (close sockets, flush files) — and the exit code is 130
 *   for SIGINT, 143 for SIGTERM;
 * - a second SIGINT or SIGTERM, while the program cleans up: the process
 *   exits at once with that signal's code, without waiting.
 *
 * A program that sets its own handler for SIGINT or SIGTERM with `onSignal`
 * stops itself: the first such signal goes to its handler instead of
 * cancelling `fn` (chapter 8's server stops accepting and serves its
 * clients to the end), and the exit code is that of a program that returned
 * or failed; the second signal still forces the exit.
 *
 * @example
 * ```ts
 * import { main, tcpv4, bindAndListen, accept, close } from "@bobbin/unix";
 *
 * main(function* () {
 *   const server = tcpv4();
 *   try {
 *     yield* bindAndListen(server, { host: "127.0.0.1", port: 3000 });
 *     const [client] = yield* accept(server);
 *     yield* echo(client);
 *   } finally {
 *     yield* close(server);    // runs on Ctrl-C, before the exit (code 130)
 *   }
 * });
 * ```
 * @throws TypeError when `fn` is not a function, for invalid options (as
 * `run`), or when `main` was called before in this process (a program has
 * one main; use `run` for runs of its own).
 */
export function main<T>(fn: B.TaskBody<[], T>, options: MainOptions = {}): Promise<never> {
  if (typeof fn !== "function") throw new TypeError(`main(fn) expects a generator function (function* () { … }), got ${describe(fn)}`);
  if (options === null || typeof options !== "object") {
    throw new TypeError(`main(fn, options) expects an options object, got ${describe(options)}`);
  }
  const { onExit, signal: outer, ...runOptions } = options;
  if (onExit !== undefined && typeof onExit !== "function") {
    throw new TypeError(`main(fn, { onExit }) expects a function (code) => void, got ${describe(onExit)}`);
  }
  if (outer !== undefined && !(outer instanceof AbortSignal)) {
    throw new TypeError(`main(fn, { signal }) expects an AbortSignal, got ${describe(outer)}`);
  }
  if (started) {
    throw new TypeError(
      "main() runs the program of this process, once: call it once, at the top of the program (use run() for other runs)",
    );
  }

  const controller = new AbortController();
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener("abort", () => controller.abort(outer.reason), { once: true });
  /** The run's signal handlers: a signal the program handles itself is left to it. */
  let handlers: SignalTable | null = null;
  function* root(): Generator<B.Instruction, T, unknown> {
    handlers = currentContext("main()").signals;
    return yield* fn();
  }
  const settled = run(root, { ...runOptions, signal: controller.signal });
  started = true;

  /** The first stop signal; the signal for which main cancelled the program. */
  let received: NodeJS.Signals | null = null;
  let stoppedBy: NodeJS.Signals | null = null;
  const stop = new Error("main(): the program was stopped by a signal");
  const onStopSignal = (signal: NodeJS.Signals): void => {
    if (received !== null) process.exit(exitCodeOf(signal));
    received = signal;
    if (handlers?.handles(signal)) return;
    stoppedBy = signal;
    controller.abort(stop);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onStopSignal);

  const finish = async (failure: { error: unknown } | null): Promise<never> => {
    let code: number;
    if (stoppedBy !== null && (failure === null || failure.error === stop)) code = exitCodeOf(stoppedBy);
    else if (failure !== null) {
      process.stderr.write(`${inspect(failure.error)}\n`);
      code = 1;
    } else code = Number(process.exitCode ?? 0);
    if (onExit !== undefined) {
      try {
        onExit(code);
        if (failure === null && stoppedBy === null) code = Number(process.exitCode ?? 0);
      } catch (error) {
        process.stderr.write(`main(): onExit failed: ${inspect(error)}\n`);
        code = 1;
      }
    }
    await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
    return process.exit(code);
  };
  return settled.then(
    () => finish(null),
    (error: unknown) => finish({ error }),
  );
}
