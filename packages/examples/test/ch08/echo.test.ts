import * as B from "@bobbin/core";
import { delay, procFds, until } from "@bobbin/test-support";
import { type Backend, libuv, run } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { echoServers } from "../../src/ch08/main.js";
import type { Stats } from "../../src/ch08/server.js";
import { newShutdown, stop, untilStop } from "../../src/ch08/shutdown.js";
import { Client, listensOn } from "../support/net.js";
import { Program } from "../support/processes.js";
import { backends } from "../support/servers.js";

/**
 * Runs `echoServers` in this process on `domains` worker domains (and dom0),
 * drives it with `clients(port)`, then sends this process SIGINT; returns what
 * the servers report.
 */
function inProcess(backend: (domain: number) => Backend, domains: number, clients: (port: number) => Promise<void>): Promise<Stats[]> {
  let port = 0;
  return run(
    function* () {
      const driver = B.spawn(function* () {
        yield* B.promise(async () => {
          while (port === 0) await delay(5);
          await clients(port);
          process.kill(process.pid, "SIGINT");
        });
      });
      const stats = yield* echoServers({
        address: { host: "127.0.0.1", port: 0 },
        domains,
        verbose: false,
        onListening: (a) => (port = "port" in a ? a.port : 0),
      });
      yield* B.awaitExn(driver);
      return stats;
    },
    { backend, domains },
  );
}

/** `node dist/ch08-echo.js` on dom0 alone, serving one client that had an echo. */
async function servingOneClient(backend: string): Promise<{ program: Program; client: Client }> {
  const program = Program.start("ch08-echo.js", ["--port", "0", "--domains", "0", "--quiet"], { BOBBIN_BACKEND: backend });
  try {
    const [, port] = await program.waitFor(/echo server on 127\.0\.0\.1:(\d+)/);
    const client = await Client.connect(Number(port));
    await client.roundTrip("hello\n");
    return { program, client };
  } catch (error) {
    program.kill();
    throw error;
  }
}

/** `n` clients at once, each echoed one line, then gone. */
async function echoes(port: number, n: number): Promise<void> {
  const cs = await Promise.all(Array.from({ length: n }, () => Client.connect(port)));
  await Promise.all(cs.map((c, i) => c.roundTrip(`hello ${i}\n`)));
  for (const c of cs) c.end();
  await Promise.all(cs.map((c) => c.closed));
}

describe("chapter 8: the stop condition", () => {
  it("a stop requested before anyone waits is not lost (the book's or_die would miss it)", async () => {
    await run(function* () {
      const shutdown = newShutdown();
      yield* stop(shutdown);
      yield* untilStop(shutdown); // returns at once
    });
  });

  it("wakes every waiter", async () => {
    const woken = await run(function* () {
      const shutdown = newShutdown();
      const waiters = Array.from({ length: 5 }, () =>
        B.spawn(function* () {
          yield* untilStop(shutdown);
          return 1;
        }),
      );
      yield* B.yieldNow();
      yield* stop(shutdown);
      return (yield* B.awaitAll(waiters)).filter((r) => r.ok).length;
    });
    expect(woken).toBe(5);
  });

  it("is shared: its mutex and condition are @bobbin/sync's cross-domain ones", () => {
    const shutdown = newShutdown();
    expect(shutdown.mutex.isShared).toBe(true);
    expect(shutdown.condition.isShared).toBe(true);
    expect(shutdown.requested.buffer).toBeInstanceOf(SharedArrayBuffer);
  });
});

describe.each(await backends())("chapter 8 on the %s backend", (name, backend) => {
  it("in process, dom0 alone: SIGINT stops the server, which reports what it served", async () => {
    const stats = await inProcess(backend, 0, (port) => echoes(port, 2));
    expect(stats).toEqual([{ domain: 0, connections: 2, bytes: "hello 0\n".length * 2 }]);
  });

  it("in process, dom0 and a worker domain: one SIGINT on dom0 stops both (the shared condition)", async () => {
    const stats = await inProcess(backend, 1, (port) => echoes(port, 20));
    expect(stats.map((s) => s.domain)).toEqual([0, 1]);
    expect(stats.reduce((a, s) => a + s.connections, 0)).toBe(20);
  });

  it("node dist/ch08-echo.js: SIGINT stops it cleanly, clients still connected are served to the end, every fd is released", async () => {
    const program = Program.start("ch08-echo.js", ["--port", "0"], { BOBBIN_BACKEND: name });
    try {
      const [, port] = await program.waitFor(/echo server on 127\.0\.0\.1:(\d+)/);
      const a = await Client.connect(Number(port));
      await a.roundTrip("first\n");
      const b = await Client.connect(Number(port));
      await b.roundTrip("second\n");
      const news = await program.waitFor(/(new client: 127\.0\.0\.1:\d+ \(domain \d+\)\n){2}/);
      expect(news[0].split("\n").filter(Boolean)).toHaveLength(2); // whole lines, one per client

      if (procFds) expect(listensOn(program.child.pid!, Number(port))).toBe(true);

      program.child.kill("SIGINT");
      await program.waitFor(/SIGINT: stopping/);
      // No more accepting: the listening socket was closed by its finaliser
      // (in every domain: a worker's descriptors are the process's too).
      if (procFds)
        await until(() => listensOn(program.child.pid!, Number(port)) === false, {
          ms: 5000,
          what: "the program's listening socket to close",
        });
      // The clients still connected are served until they leave.
      await a.roundTrip("still served\n");
      a.end();
      await a.closed;
      await b.roundTrip("me too\n");
      b.end();
      await b.closed;

      const exit = await program.end();
      expect(exit.stderr).toBe("");
      expect(exit.code).toBe(0);
      const served = [...exit.stdout.matchAll(/domain \d+: (\d+) connection\(s\), \d+ byte\(s\) echoed/g)].map((m) => Number(m[1]));
      expect(served.reduce((x, y) => x + y, 0)).toBe(2); // on whichever domains took them
      expect(exit.stdout).toMatch(/no socket left open/);
    } finally {
      program.kill();
    }
  });

  it("node dist/ch08-echo.js under main: SIGTERM cancels the servers (their clients' connections close), exit code 143", async () => {
    const { program, client } = await servingOneClient(name);
    try {
      program.child.kill("SIGTERM");
      await client.closed; // cancelled, not served to the end
      const exit = await program.end();
      expect(exit.code).toBe(143);
      expect(exit.stderr).toBe("");
      expect(exit.stdout).not.toMatch(/SIGINT: stopping/);
    } finally {
      program.kill();
    }
  });

  it("node dist/ch08-echo.js under main: a second SIGINT, while a client is still served, ends it at once (130)", async () => {
    const { program, client } = await servingOneClient(name);
    try {
      program.child.kill("SIGINT");
      await program.waitFor(/SIGINT: stopping/);
      await client.roundTrip("still served\n"); // the graceful stop waits for this client…
      program.child.kill("SIGINT"); // …unless asked again
      const exit = await program.end();
      expect(exit.code).toBe(130);
      expect(exit.stdout).not.toMatch(/connection\(s\)/); // no report: the run never ended
      await client.closed;
    } finally {
      program.kill();
    }
  });

  it("node dist/ch08-echo.js --domains 1: every domain serves", async () => {
    const program = Program.start("ch08-echo.js", ["--port", "0", "--domains", "1"], { BOBBIN_BACKEND: name });
    try {
      const [, port] = await program.waitFor(/echo server on 127\.0\.0\.1:(\d+), dom0 \+ 1 worker domain/);
      // Waves of clients until each domain has said it took one: a libuv worker
      // domain accepts once a relay process brought its descriptor (a Node start,
      // slower on a loaded machine), and which domain takes a connection is the
      // system's choice. Bounded far beyond both.
      const took = (domain: number) => program.stdout.includes(`(domain ${domain})\n`);
      const end = Date.now() + 20_000;
      let clients = 0;
      while (!(took(0) && took(1))) {
        if (Date.now() > end) throw new Error(`not every domain took a client of ${clients}; stdout: ${program.stdout}`);
        await echoes(Number(port), 10);
        clients += 10;
        await delay(20); // leaves the CPU to a relay still starting
      }
      program.child.kill("SIGINT");
      const exit = await program.end();
      expect(exit.code).toBe(0);
      const served = [...exit.stdout.matchAll(/domain (\d+): (\d+) connection/g)].map((m) => [Number(m[1]), Number(m[2])]);
      expect(served.map(([d]) => d)).toEqual([0, 1]);
      expect(served.reduce((x, [, n]) => x + n!, 0)).toBe(clients);
      for (const [, n] of served) expect(n).toBeGreaterThan(0);
      expect(exit.stdout).toMatch(/no socket left open/);
    } finally {
      program.kill();
    }
  });
});

describe("chapter 8: a client that resets its connection", () => {
  it("is gone, not an error: the server serves on", async () => {
    const stats = await inProcess(libuv, 0, async (port) => {
      const rude = await Client.connect(port);
      await rude.roundTrip("bye\n");
      rude.socket.resetAndDestroy(); // RST
      await rude.closed;
      const polite = await Client.connect(port);
      await polite.roundTrip("hello\n");
      polite.end();
      await polite.closed;
    });
    expect(stats[0]!.connections).toBe(2);
  });
});
