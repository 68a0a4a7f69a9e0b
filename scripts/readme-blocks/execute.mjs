// Runs compiled blocks with node, each in a process of its own with a deadline, a few at
// a time, and judges what they did against what their README says.
import { spawn } from "node:child_process";

/**
 * Runs `node file` in `cwd`; kills its whole process group at the deadline.
 * @returns {Promise<{ code: number | null, signal: string | null, stdout: string, stderr: string, timedOut: boolean, ms: number }>}
 */
export function runNode(file, cwd, timeoutMs) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.setEncoding("utf8").on("data", (s) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s) => (stderr += s));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // the group already exited between the deadline and the kill: nothing is left to stop
      }
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut, ms: performance.now() - started });
    });
  });
}

const ELLIPSIS = "…";

/**
 * Whether `actual` (printed lines) matches `expected` (a README's lines), where a line that
 * is `…` alone matches any number of lines. Trailing blanks are ignored on both sides.
 */
export function matchesOutput(expected, actual) {
  const norm = (lines) => {
    const out = lines.map((l) => l.trimEnd());
    while (out.length > 0 && out.at(-1) === "") out.pop();
    return out;
  };
  const e = norm(expected);
  const a = norm(actual);
  const memo = new Map();
  const match = (i, j) => {
    const key = i * (a.length + 1) + j;
    if (memo.has(key)) return memo.get(key);
    let ok;
    if (i === e.length) ok = j === a.length;
    else if (e[i] === ELLIPSIS) ok = match(i + 1, j) || (j < a.length && match(i, j + 1));
    else ok = j < a.length && e[i] === a[j] && match(i + 1, j + 1);
    memo.set(key, ok);
    return ok;
  };
  return match(0, 0);
}

/** What went wrong with a run, or null when it did what the plan says. */
export function judge(plan, result, timeoutMs) {
  if (result.timedOut) return `did not end within ${timeoutMs / 1000} s (marker timeout=<seconds> if it needs longer)`;
  const tail = (s) => s.trimEnd().split("\n").slice(-15).join("\n");
  if (plan.throws !== undefined) {
    if (result.code === 0) return `should have failed with "${plan.throws}", but exited 0`;
    if (!result.stderr.includes(plan.throws)) return `should have failed with "${plan.throws}"; its stderr:\n${tail(result.stderr)}`;
  } else if (result.code !== plan.exit) {
    const how = result.signal ? `was killed by ${result.signal}` : `exited ${result.code}`;
    return `${how}, expected exit code ${plan.exit}; its stderr:\n${tail(result.stderr)}`;
  }
  if (plan.expected !== undefined && !matchesOutput(plan.expected, result.stdout.split("\n"))) {
    return `printed:\n${result.stdout.trimEnd()}\nbut its README shows:\n${plan.expected.join("\n")}`;
  }
  return null;
}

/**
 * Runs `jobs` at most `parallel` at a time; two jobs with the same `port` never overlap.
 * @template T
 * @param {{ port?: string, start: () => Promise<T> }[]} jobs
 * @returns {Promise<T[]>} the results, in the order of the jobs
 */
export function schedule(jobs, parallel) {
  const results = new Array(jobs.length);
  const waiting = jobs.map((job, index) => ({ job, index }));
  const busyPorts = new Set();
  let running = 0;
  return new Promise((resolve, reject) => {
    const next = () => {
      if (waiting.length === 0 && running === 0) return resolve(results);
      while (running < parallel) {
        const at = waiting.findIndex(({ job }) => job.port === undefined || !busyPorts.has(job.port));
        if (at < 0) return;
        const [{ job, index }] = waiting.splice(at, 1);
        running++;
        if (job.port !== undefined) busyPorts.add(job.port);
        job.start().then((result) => {
          results[index] = result;
          running--;
          if (job.port !== undefined) busyPorts.delete(job.port);
          next();
        }, reject);
      }
    };
    next();
  });
}
