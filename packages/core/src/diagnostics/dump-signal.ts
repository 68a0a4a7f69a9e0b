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

const UNCATCHABLE = new Set(["SIGKILL", "SIGSTOP"]);
const users = new Map<NodeJS.Signals, number>();

function printDump(): void {
  void dump().then((d) => process.stderr.write(formatDump(d)));
}

/**
 * @internal The dump signal a run asked for, from its option or else the
 * environment; null for none.
 * @throws RangeError for a name that is not a signal Node can catch.
 */
export function dumpSignalOf(option: unknown): NodeJS.Signals | null {
  const fromEnv = option === undefined;
  const value = fromEnv ? process.env.BOBBIN_DUMP_SIGNAL : option;
  if (value === undefined || value === "") return null;
  if (typeof value !== "string" || !(value in constants.signals) || UNCATCHABLE.has(value)) {
    const where = fromEnv ? "BOBBIN_DUMP_SIGNAL" : "run({ dumpSignal })";
    throw new RangeError(`${where} must name a signal Node can catch, such as "SIGUSR2", got ${describe(value)}`);
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
