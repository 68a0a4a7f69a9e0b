/**
 * Printing the task tree when a signal arrives: `run(main, { dumpSignal })`
 * or `BOBBIN_DUMP_SIGNAL=SIGUSR2` in the environment, for a live server that
 * seems stuck: `kill -USR2 <pid>` prints `formatDump(await dump())` on stderr.
 * One listener per signal serves every run of the thread.
 */
import { constants } from "node:os";
import { describe } from "../describe.js";
import { dump } from "./dump.js";
import { formatDump } from "./format.js";

/**
 * Signals a dump never listens for, and why: a listener replaces what the
 * signal does, so SIGTERM would print the tree instead of ending the process.
 */
const REFUSED = new Map<string, string>([
  ["SIGTERM", "it asks the process to stop"],
  ["SIGINT", "it asks the process to stop"],
  ["SIGHUP", "it asks the process to stop"],
  ["SIGQUIT", "it asks the process to stop"],
  ["SIGKILL", "it stops the process and cannot be caught"],
  ["SIGSTOP", "it stops the process and cannot be caught"],
  ["SIGTSTP", "it stops the process (job control)"],
  ["SIGTTIN", "it stops the process (job control)"],
  ["SIGTTOU", "it stops the process (job control)"],
  ["SIGABRT", "it aborts the process"],
  ["SIGSEGV", "it reports a fault of the process, which no JavaScript listener can safely handle"],
  ["SIGBUS", "it reports a fault of the process, which no JavaScript listener can safely handle"],
  ["SIGFPE", "it reports a fault of the process, which no JavaScript listener can safely handle"],
  ["SIGILL", "it reports a fault of the process, which no JavaScript listener can safely handle"],
]);
const users = new Map<NodeJS.Signals, number>();

function printDump(): void {
  void dump().then((d) => process.stderr.write(formatDump(d)));
}

/**
 * @internal The dump signal a run asked for, from its option or else the
 * environment; null for none.
 * @throws RangeError for a name that is not a Unix signal Node can catch, or a
 * signal that stops processes or reports a fault (see `REFUSED`).
 */
export function dumpSignalOf(option: unknown): NodeJS.Signals | null {
  const fromEnv = option === undefined;
  const value = fromEnv ? process.env.BOBBIN_DUMP_SIGNAL : option;
  if (value === undefined || value === "") return null;
  const where = fromEnv ? "BOBBIN_DUMP_SIGNAL" : "run({ dumpSignal })";
  if (typeof value !== "string" || !Object.hasOwn(constants.signals, value)) {
    throw new RangeError(`${where} must name a Unix signal Node can catch, such as "SIGUSR2", got ${describe(value)}`);
  }
  const why = REFUSED.get(value);
  if (why !== undefined) {
    throw new RangeError(
      `${where} must not be ${value}: ${why}, and the dump's listener would replace what it does. ` +
        'Use a Unix signal that nothing else relies on, such as "SIGUSR2"',
    );
  }
  return value as NodeJS.Signals;
}

/** @internal Prints the dump on `signal` until the returned function is called. */
export function listenForDumps(signal: NodeJS.Signals): () => void {
  const n = users.get(signal) ?? 0;
  if (n === 0) process.on(signal, printDump);
  users.set(signal, n + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const left = users.get(signal)! - 1;
    users.set(signal, left);
    if (left === 0) process.off(signal, printDump);
  };
}
