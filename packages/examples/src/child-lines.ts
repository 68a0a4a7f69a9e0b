/**
 * Runs a command and reads its output through Bobbin sockets (`fromStream`
 * over the child's stdio), line by line as it comes:
 *
 *     node dist/child-lines.js [--input text] [--timeout seconds] -- <command> [args…]
 *
 * Prints each line as `out 1| …` or `err 1| …`, then how the command ended,
 * and exits with the command's code. `--input` is written to its stdin;
 * `--timeout` gives up after that many seconds (the command is killed, and
 * the `Timeout` is the program's error). `main` runs it: Ctrl-C kills the
 * command too, and the exit code is 130.
 */
import { parseArgs } from "node:util";
import { main, withTimeout } from "@bobbin/unix";
import { runCommand } from "./child/lines.js";

const { values, positionals } = parseArgs({
  options: { input: { type: "string" }, timeout: { type: "string", default: "Infinity" } },
  allowPositionals: true,
});
const [command, ...args] = positionals;
if (command === undefined)
  throw new TypeError("name a command to run: node dist/child-lines.js [--input text] [--timeout s] -- <command> [args…]");
const timeout = Number(values.timeout);
if (Number.isNaN(timeout) || timeout < 0) throw new RangeError(`--timeout must be a number of seconds ≥ 0, got ${values.timeout}`);

main(function* () {
  const numbers = { out: 0, err: 0 };
  const result = yield* withTimeout(
    timeout,
    runCommand(command, args, {
      ...(values.input === undefined ? {} : { input: values.input }),
      onLine: (from, line) => console.log(`${from} ${++numbers[from]}| ${line}`),
    }),
  );
  const how = result.code !== null ? `exit code ${result.code}` : `signal ${result.signal}`;
  console.log(`${command}: ${how}; ${result.lines.out} line(s) on stdout, ${result.lines.err} on stderr`);
  process.exitCode = result.code ?? 1;
});
