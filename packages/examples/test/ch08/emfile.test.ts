import { delay } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Client } from "../support/net.js";
import { Program } from "../support/processes.js";
import { backends } from "../support/servers.js";

const CLIENTS = 100;
const FD_LIMIT = 64;

/** How long a served client keeps its connection: long enough that the server runs out of descriptors. */
const HOLD_MS = 200;

/**
 * A client that sends one line, waits for its echo, keeps the connection a
 * moment, then leaves. A connection the server closes unanswered is tried
 * again (libuv closes what it cannot accept); returns how many tries it took.
 */
async function served(port: number, i: number): Promise<number> {
  for (let tries = 1; tries <= 50; tries++) {
    const c = await Client.connect(port);
    try {
      await c.roundTrip(`hello ${i}\n`, 20_000);
      await delay(HOLD_MS);
      c.end();
      await c.closed;
      return tries;
    } catch (error) {
      if (!c.ended) throw error; // no answer, and no hang-up either: a server that stopped serving
      c.destroy();
      await delay(20);
    }
  }
  throw new Error(`client ${i}: closed unanswered 50 times`);
}

describe.each((await backends()).map(([name]) => name))("chapter 8 out of file descriptors, on the %s backend", (name) => {
  it(`under ulimit -n ${FD_LIMIT}, ${CLIENTS} clients at once: the server backs off, keeps serving, and serves every client`, async () => {
    // A cap above what the descriptors allow: this test is about running out of them (test/limits/ keeps under it).
    const args = ["--port", "0", "--domains", "1", "--quiet", "--max-clients", "1024"];
    const program = Program.start("ch08-echo.js", args, { BOBBIN_BACKEND: name }, FD_LIMIT);
    try {
      const [, port] = await program.waitFor(/echo server on 127\.0\.0\.1:(\d+)/, 20_000);
      // More clients than the server has descriptors: it runs out while they wait.
      const tries = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => served(Number(port), i)));
      if (name === "native") {
        // The native backend reports EMFILE to accept; the connections wait in
        // the kernel's queue until accept can take them: none is dropped.
        expect(program.stdout).toMatch(/accept failed with EMFILE: accepting again once clients leave/);
        expect(tries.every((n) => n === 1)).toBe(true);
      } else {
        // libuv accepts and closes what it cannot keep (its reserve-fd trick,
        // see @bobbin/unix's README): those clients came again and were served.
        expect(tries.some((n) => n > 1)).toBe(true);
      }
      expect(program.child.exitCode).toBeNull(); // still serving
      program.child.kill("SIGINT");
      const exit = await program.end();
      expect(exit.stderr).toBe("");
      expect(exit.code).toBe(0);
      const counts = [...exit.stdout.matchAll(/domain \d+: (\d+) connection/g)].map((m) => Number(m[1]));
      expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(CLIENTS);
      expect(exit.stdout).toMatch(/no socket left open/);
    } finally {
      program.kill();
    }
  }, 60_000);
});
