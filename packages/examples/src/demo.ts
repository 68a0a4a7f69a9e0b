/**
 * `pnpm demo`: the final echo server of chapter 8, driven by a built-in
 * client, then stopped with SIGINT.
 *
 *     node dist/demo.js [--connections 1000] [--concurrency 50] [--round-trips 200] [--size 64]
 *
 * 1. starts `dist/ch08-echo.js` in a child process, serving on every domain
 *    (dom0 listens; dom0 and the worker domains accept on that socket), on
 *    the native backend when its addon is built and it can share a listening
 *    socket across domains, libuv otherwise (`BOBBIN_BACKEND` forces one);
 * 2. drives it from this process with a Bobbin client: many connections,
 *    every echo checked, a progress line;
 * 3. sends it SIGINT and prints what it served, the round trips per
 *    second, the connections each domain served, and whether every socket
 *    was released.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { run } from "@bobbin/unix";
import { drive, type Load, type Progress } from "./demo/client.js";
import { chooseBackend } from "./support/backend.js";

interface Report {
  readonly backend: string;
  readonly domains: number;
  readonly stats: { domain: number; connections: number; bytes: number }[];
  readonly clean: boolean;
}

const { values } = parseArgs({
  options: {
    connections: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "50" },
    "round-trips": { type: "string", default: "200" },
    size: { type: "string", default: "64" },
  },
});
const load: Load = {
  connections: Number(values.connections),
  concurrency: Number(values.concurrency),
  roundTrips: Number(values["round-trips"]),
  size: Number(values.size),
};
for (const [k, v] of Object.entries(load)) {
  if (!Number.isInteger(v) || v < 1 || (k === "size" && v < 8))
    throw new RangeError(`--${k} must be an integer ≥ ${k === "size" ? 8 : 1}, got ${v}`);
}

const n = (x: number): string => x.toLocaleString("en-US");
const rate = (p: Progress): number => p.roundTrips / ((performance.now() - p.started) / 1000);
const tty = process.stdout.isTTY === true;

const backend = await chooseBackend();
console.log(`backend: ${backend.name} (${backend.reason})`);

// 1. The server: chapter 8's program, in a child process of its own.
const server = spawn(process.execPath, [fileURLToPath(new URL("./ch08-echo.js", import.meta.url)), "--port", "0", "--quiet", "--json"], {
  stdio: ["ignore", "pipe", "inherit"],
  env: { ...process.env, BOBBIN_BACKEND: backend.choice },
});
let output = "";
const lines: string[] = [];
server.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
  output += chunk;
  const parts = output.split("\n");
  output = parts.pop()!;
  lines.push(...parts);
});
const exited = once(server, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
const waitForLine = async (pattern: RegExp): Promise<RegExpMatchArray> => {
  for (;;) {
    for (const line of lines) {
      const m = line.match(pattern);
      if (m !== null) return m;
    }
    if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode}) before printing ${pattern}: ${lines.join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

let failed = false;
try {
  const [, host, port, domains] = await waitForLine(/echo server on (.+):(\d+), dom0 \+ (\d+) worker domain/);
  console.log(`server: chapter 8's echo server on ${host}:${port}, dom0 + ${domains} worker domain(s) accepting on it (pid ${server.pid})`);

  // 2. The client: a Bobbin program in this process.
  console.log(
    `client: ${n(load.connections)} connections, ${load.concurrency} at a time, ` +
      `${n(load.roundTrips)} round trips of ${load.size} B each, every echo checked`,
  );
  const show = (p: Progress): void => {
    const line = `  ${n(p.connections)}/${n(load.connections)} connections, ${n(p.roundTrips)} round trips, ${n(Math.round(rate(p)))}/s`;
    if (tty) process.stdout.write(`\r${line}   `);
    else console.log(line);
  };
  const done = await run(
    function* () {
      return yield* drive({ host: host!, port: Number(port) }, load, show, tty ? 0.2 : 1);
    },
    { backend: backend.factory },
  );
  if (tty) process.stdout.write("\n");
  const seconds = (performance.now() - done.started) / 1000;
  console.log(
    `client done: ${n(done.connections)} connections, ${n(done.roundTrips)} round trips verified in ${seconds.toFixed(2)} s: ` +
      `${n(Math.round(done.roundTrips / seconds))} round trips/s`,
  );

  // 3. SIGINT, and what the server says as it stops.
  console.log(`sending SIGINT to the server (pid ${server.pid})`);
  server.kill("SIGINT");
  const [code, signal] = await exited;
  const json = lines.find((l) => l.startsWith("REPORT "));
  if (json === undefined) throw new Error(`the server ended (code ${code}, signal ${signal}) without its report:\n${lines.join("\n")}`);
  const report = JSON.parse(json.slice("REPORT ".length)) as Report;
  const connections = report.stats.reduce((a, s) => a + s.connections, 0);
  const bytes = report.stats.reduce((a, s) => a + s.bytes, 0);
  console.log(`server stopped (exit code ${code}): ${n(connections)} connections served, ${n(bytes)} bytes echoed`);
  const share = (s: Report["stats"][number]): string => `${(connections === 0 ? 0 : (100 * s.connections) / connections).toFixed(0)}%`;
  for (const s of report.stats) console.log(`  domain ${s.domain}: ${n(s.connections)} connections (${share(s)}), ${n(s.bytes)} bytes`);
  for (const line of lines) if (line.startsWith("fds:") || line.includes("socket handle")) console.log(`server: ${line}`);
  const expectedBytes = load.connections * load.roundTrips * load.size;
  const idle = report.stats.filter((s) => s.connections === 0).map((s) => `domain ${s.domain}`);
  const problems = [
    ...(code === 0 ? [] : [`exit code ${code}`]),
    ...(connections === load.connections ? [] : [`${n(connections)} connections served, not ${n(load.connections)}`]),
    ...(bytes === expectedBytes ? [] : [`${n(bytes)} bytes echoed, not ${n(expectedBytes)}`]),
    ...(idle.length === 0 ? [] : [`${idle.join(", ")} served no connection`]),
    ...(report.clean ? [] : ["a socket was left open"]),
  ];
  const ok = problems.length === 0;
  console.log(
    ok
      ? `ok: every connection served and every byte echoed once, by all ${report.stats.length} domains; no fd left open`
      : `MISMATCH: ${problems.join("; ")}`,
  );
  failed = !ok;
} catch (error) {
  failed = true;
  console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
  if (server.exitCode === null) {
    server.kill("SIGKILL");
    await exited;
  }
}
process.exitCode = failed ? 1 : 0;
