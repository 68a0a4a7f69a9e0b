/**
 * Runs jobs as child processes, a few at a time:
 *
 *     node dist/job-runner.js [--jobs 6] [--limit 2] [--seconds 1] [--grace 2]
 *
 * Each job is `node -e …`: it prints its pid, works (sleeps) for `--seconds`,
 * and exits with its number modulo 3 as its code. At most `--limit` run at
 * once; each line a job prints is shown as `[job 3] …`. Ctrl-C (SIGINT) or
 * SIGTERM stops the runner: every running job's process gets SIGTERM (then
 * SIGKILL after `--grace` seconds) and is reaped before the program exits
 * (code 130, 143 for SIGTERM); the last line says how many jobs finished.
 */
import { parseArgs } from "node:util";
import { main } from "@bobbin/unix";
import { type Job, type JobEvent, runJobs } from "./jobs/runner.js";
import { chooseBackend } from "./support/backend.js";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "6" },
    limit: { type: "string", default: "2" },
    seconds: { type: "string", default: "1" },
    grace: { type: "string", default: "2" },
  },
});

function number(name: keyof typeof values, integer: boolean): number {
  const n = Number(values[name]);
  if (!(n >= 0) || (integer && !Number.isInteger(n)))
    throw new RangeError(`--${name} must be a${integer ? "n integer" : " number"} ≥ 0, got ${values[name]}`);
  return n;
}
const count = number("jobs", true);
const limit = number("limit", true);
const seconds = number("seconds", false);
const grace = number("grace", false);

const jobs: Job[] = Array.from({ length: count }, (_, i) => ({
  name: `job ${i + 1}`,
  command: process.execPath,
  args: [
    "-e",
    `console.log("pid " + process.pid); setTimeout(() => { console.log("done"); process.exitCode = ${(i + 1) % 3}; }, ${seconds * 1000});`,
  ],
}));

const backend = await chooseBackend();
console.log(`backend: ${backend.name} (${backend.reason})`);
let finished = 0;

function report(event: JobEvent): void {
  const tag = `[${event.job.name}]`;
  if (event.kind === "started") console.log(`${tag} started, pid ${event.pid}`);
  else if (event.kind === "line") console.log(`${tag} ${event.line}`);
  else {
    finished++;
    const how = event.exit.code !== null ? `exit code ${event.exit.code}` : `signal ${event.exit.signal}`;
    console.log(`${tag} ${how} after ${event.seconds.toFixed(1)} s`);
  }
}

main(
  function* () {
    yield* runJobs(jobs, { limit, grace, onEvent: report });
  },
  {
    backend: backend.factory,
    onExit: () => console.log(`${finished} of ${count} job(s) finished`),
  },
);
