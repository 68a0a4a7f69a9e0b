import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromeTraceProblems } from "@bobbin/test-support";
import { sleep } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { Sim, Trace } from "../src/index.js";
import { echoServer, echoThrough } from "./support/programs.js";

const run = promisify(execFile);

/** The trace of an echo through a server, then a partition and a sleep of 1 s. */
async function probeTrace(): Promise<Trace> {
  const sim = new Sim({ seed: 1, trace: true });
  sim.network({ latency: 0.001 });
  sim.host("server", echoServer(7));
  sim.client("client", function* probe() {
    yield* echoThrough("server", 7, Buffer.from("hi"));
    sim.partition("client", "server");
    yield* sleep(1);
  });
  await sim.run();
  return sim.trace();
}

describe("the trace", () => {
  it("says when, where and what: tasks' lives, packets, faults", async () => {
    const trace = await probeTrace();
    expect(trace).toBeInstanceOf(Trace);
    const lines = [...trace];
    expect(lines.length).toBe(trace.length);
    expect(String(trace)).toBe(`${lines.join("\n")}\n`);
    for (const line of lines) expect(line).toMatch(/^\d+\.\d{6} (world|server|client) \S/);
    expect(lines.some((l) => /^0\.000000 client start probe#\d+$/.test(l))).toBe(true);
    expect(lines).toContain("0.000000 client send tcp 10.0.0.2:49152 > 10.0.0.1:7 syn");
    expect(lines).toContain("0.001000 server recv tcp 10.0.0.2:49152 > 10.0.0.1:7 syn");
    expect(lines).toContain("0.003000 server recv tcp 10.0.0.2:49152 > 10.0.0.1:7 data 2");
    expect(lines).toContain("0.004000 world partition client server");
    expect(lines).toContain("0.005000 server hold tcp 10.0.0.1:7 > 10.0.0.2:49152 fin"); // the server's FIN waits for a repair
    expect(lines.some((l) => /^1\.004000 client end probe#\d+ resolved$/.test(l))).toBe(true);
  });

  it("draws as a well-formed Chrome trace: a process per host, a track per task with its waits, packets delivered as flows", async () => {
    const trace = (await probeTrace()).toChromeTrace();
    expect(chromeTraceProblems(JSON.stringify(trace))).toEqual([]);
    const events = trace.traceEvents;
    const processes = events.filter((e) => e.name === "process_name").map((e) => `${e.pid} ${e.args!.name}`);
    expect(processes).toEqual(expect.arrayContaining(["0 world", "1 server", "2 client"]));
    const pid = (host: string) => processes.indexOf(processes.find((p) => p.endsWith(` ${host}`))!);
    // the probe's life, 1.004 s of virtual time, with its sleep of 1 s as a wait inside it
    const probe = events.find((e) => e.ph === "X" && e.pid === pid("client") && e.name.startsWith("probe#"))!;
    expect(probe.dur).toBe(1_004_000);
    expect(events.some((e) => e.ph === "X" && e.tid === probe.tid && e.name === "waits" && e.dur === 1_000_000)).toBe(true);
    // the SYN sent by the client at 0 arrives at the server 1 ms later: a flow between the two slices
    const syn = "tcp 10.0.0.2:49152 > 10.0.0.1:7 syn";
    const send = events.find((e) => e.ph === "X" && e.name === `send ${syn}`)!;
    const recv = events.find((e) => e.ph === "X" && e.name === `recv ${syn}`)!;
    expect([send.pid, send.ts, recv.pid, recv.ts]).toEqual([pid("client"), 0, pid("server"), 1000]);
    const start = events.find((e) => e.ph === "s" && e.pid === send.pid && e.ts === send.ts)!;
    expect(events.find((e) => e.ph === "f" && e.id === start.id)).toMatchObject({ pid: recv.pid, ts: recv.ts, bp: "e" });
    // a packet held by the partition never arrives: no flow for it
    const flows = events.filter((e) => e.ph === "s").length;
    expect(flows).toBe(events.filter((e) => e.ph === "X" && e.cat === "recv").length);
  });

  it("is kept only when asked for", () => {
    expect(() => new Sim({ seed: 1 }).trace()).toThrow(/new Sim\(\{ trace: true \}\)/);
  });

  it("is the same, byte for byte, in two processes given the same seed (and differs for another seed)", async () => {
    const child = fileURLToPath(new URL("./fixtures/trace-child.mjs", import.meta.url));
    if (!existsSync(fileURLToPath(new URL("../dist/index.js", import.meta.url)))) {
      throw new Error("this test runs the built package in child processes: run pnpm build (pnpm test builds first)");
    }
    const traceOf = async (seed: number) => (await run(process.execPath, [child, String(seed)], { maxBuffer: 64 * 1024 * 1024 })).stdout;
    const [first, second, other] = await Promise.all([traceOf(1234), traceOf(1234), traceOf(4321)]);
    expect(first.split("\n").length).toBeGreaterThan(200);
    expect(first).toMatch(/ lose udp /); // faults drawn from the seed happened
    expect(first).toMatch(/ server crash\n/);
    expect(second).toBe(first);
    expect(other).not.toBe(first);
  });
});
