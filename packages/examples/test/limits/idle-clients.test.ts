// The servers' bounds on their clients: under `ulimit -n 64`, a hundred
// connections that send nothing do not lock a real client out. The server
// holds at most --max-clients of them; at the cap the one silent the longest
// makes room for the newcomer; one silent for --idle-timeout is let go.

import * as net from "node:net";
import { delay } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { LineClient } from "../support/lines.js";
import { Client } from "../support/net.js";
import { Program } from "../support/processes.js";
import { backends } from "../support/servers.js";

const IDLE = 100;
const FD_LIMIT = 64;
/** How long a real client may wait for its answer. */
const ANSWER_MS = 3000;

/** Opens `n` connections that send nothing; resolves once each connected or was refused/closed (bounded). */
async function idleConnections(port: number, n: number): Promise<net.Socket[]> {
  const sockets = Array.from({ length: n }, () => net.connect(port, "127.0.0.1"));
  await Promise.all(
    sockets.map(
      (s) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 10_000);
          const done = (): void => {
            clearTimeout(timer);
            resolve();
          };
          s.once("connect", done)
            .once("close", done)
            .on("error", () => {});
        }),
    ),
  );
  await delay(300); // the server takes them in
  return sockets;
}

const programs = [
  {
    file: "chat-relay.js",
    args: [] as string[],
    listening: /chat relay on 127\.0\.0\.1:(\d+)/,
    exitCode: 130,
    async answered(port: number): Promise<void> {
      const c = await LineClient.connect(port);
      try {
        await c.waitForLine((l) => l.startsWith("* welcome, "), ANSWER_MS);
        c.send("/who\n");
        await c.waitForLine((l) => l.startsWith("* here: "), ANSWER_MS);
      } finally {
        c.socket.destroy();
      }
    },
  },
  {
    file: "ch08-echo.js",
    args: ["--domains", "1", "--quiet"],
    listening: /echo server on 127\.0\.0\.1:(\d+)/,
    exitCode: 0,
    async answered(port: number): Promise<void> {
      const c = await Client.connect(port);
      try {
        await c.roundTrip("hello from a real client\n", ANSWER_MS);
      } finally {
        c.socket.destroy();
      }
    },
  },
];

describe.each((await backends()).map(([name]) => name))("bounded clients on the %s backend", (name) => {
  it.each(programs)(
    `$file under ulimit -n ${FD_LIMIT}: a real client is answered while ${IDLE} idle connections sit there`,
    async (p) => {
      const program = Program.start(p.file, ["--port", "0", ...p.args], { BOBBIN_BACKEND: name }, FD_LIMIT);
      let idle: net.Socket[] = [];
      try {
        const [, port] = await program.waitFor(p.listening, 20_000);
        idle = await idleConnections(Number(port), IDLE);
        await p.answered(Number(port));
        await p.answered(Number(port)); // and the next one
        expect(program.child.exitCode).toBeNull(); // still serving
        // chapter 8's servers wait for their clients to leave once stopped: they leave first.
        for (const s of idle) s.destroy();
        program.child.kill("SIGINT");
        const exit = await program.end();
        expect(exit.stderr).toBe("");
        expect(exit.code).toBe(p.exitCode);
        expect(exit.stdout).toMatch(/no socket left open/);
      } finally {
        for (const s of idle) s.destroy();
        program.kill();
      }
    },
    60_000,
  );

  it("a client silent for --idle-timeout is let go, told why", async () => {
    const program = Program.start("chat-relay.js", ["--port", "0", "--idle-timeout", "0.3"], { BOBBIN_BACKEND: name });
    try {
      const [, port] = await program.waitFor(/chat relay on 127\.0\.0\.1:(\d+)/, 20_000);
      const c = await LineClient.connect(Number(port));
      await c.waitForLine((l) => l.startsWith("* welcome, "));
      const started = Date.now();
      await c.waitForClose(5000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(c.lines.at(-1)).toBe("* nothing received for 0.3 s: goodbye");
      program.child.kill("SIGINT");
      expect((await program.end()).code).toBe(130);
    } finally {
      program.kill();
    }
  }, 30_000);
});
