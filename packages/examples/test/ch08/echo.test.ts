import * as B from "@bobbin/core";
import { libuv, run } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { echoServers } from "../../src/ch08/main.js";
import { probeParallelListen } from "../../src/ch08/probe.js";
import { Shutdown, stopFlag } from "../../src/ch08/shutdown.js";
import { Client, delay } from "../support/net.js";
import { Program } from "../support/processes.js";
import { backends } from "../support/servers.js";

const parallel = await probeParallelListen(libuv);

describe("chapter 8: the stop condition", () => {
  it("a stop requested before anyone waits is not lost (the book's or_die would miss it)", async () => {
    await run(function* () {
      const shutdown = new Shutdown();
      yield* shutdown.request();
      yield* shutdown.wait(); // returns at once
    });
  });

  it("wakes every waiter", async () => {
    const woken = await run(function* () {
      const shutdown = new Shutdown();
      const waiters = Array.from({ length: 5 }, () =>
        B.spawn(function* () {
          yield* shutdown.wait();
          return 1;
        }),
      );
      yield* B.yieldNow();
      yield* shutdown.request();
      return (yield* B.awaitAll(waiters)).filter((r) => r.ok).length;
    });
    expect(woken).toBe(5);
  });

  it("the shared flag relays a stop to another domain's condition", async () => {
    await run(function* () {
      const flag = stopFlag();
      const here = new Shutdown(flag);
      const there = new Shutdown(flag); // another domain's, in the program
      const relay = B.spawn(function* () {
        yield* there.relay();
      });
      const waiter = B.spawn(function* () {
        yield* there.wait();
      });
      yield* here.request();
      yield* B.awaitExn(waiter);
      yield* B.awaitExn(relay);
    });
  });
});

describe.each(await backends())("chapter 8 on the %s backend", (name, backend) => {
  it("in process: SIGINT stops the servers, which report what they served", async () => {
    let port = 0;
    const stats = await run(
      function* () {
        const clients = B.spawn(function* () {
          yield* B.promise(async () => {
            while (port === 0) await delay(5);
            const cs = await Promise.all([Client.connect(port), Client.connect(port)]);
            await Promise.all(cs.map((c, i) => c.roundTrip(`hello ${i}\n`)));
            for (const c of cs) c.end();
            await Promise.all(cs.map((c) => c.closed));
            process.kill(process.pid, "SIGINT");
          });
        });
        const s = yield* echoServers({
          address: { host: "127.0.0.1", port: 0 },
          domains: 0,
          verbose: false,
          onListening: (a) => (port = "port" in a ? a.port : 0),
        });
        yield* B.awaitExn(clients);
        return s;
      },
      { backend },
    );
    expect(stats).toEqual([{ domain: 0, connections: 2, bytes: "hello 0\n".length * 2 }]);
  });

  it("node dist/ch08-echo.js: SIGINT stops it cleanly, clients still connected are served to the end, every fd is released", async () => {
    const program = Program.start("ch08-echo.js", ["--port", "0"], { BOBBIN_BACKEND: name });
    try {
      const [, port] = await program.waitFor(/echo server on 127\.0\.0\.1:(\d+)/);
      const a = await Client.connect(Number(port));
      await a.roundTrip("first\n");
      const b = await Client.connect(Number(port));
      await b.roundTrip("second\n");
      const news = await program.waitFor(/(new client: 127\.0\.0\.1:\d+\n){2}/);
      expect(news[0].split("\n").filter(Boolean)).toHaveLength(2); // whole lines, one per client

      program.child.kill("SIGINT");
      await program.waitFor(/SIGINT: stopping/);
      // No more accepting: the listening socket was closed by its finaliser.
      await delay(100);
      await expect(Client.connect(Number(port))).rejects.toMatchObject({ code: "ECONNREFUSED" });
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
      expect(exit.stdout).toMatch(/domain 0: 2 connection\(s\), \d+ byte\(s\) echoed/);
      expect(exit.stdout).toMatch(/no socket left open/);
    } finally {
      program.kill();
    }
  });

  it.runIf(parallel.ok)("node dist/ch08-echo.js --domains 1: every domain serves", async () => {
    const program = Program.start("ch08-echo.js", ["--port", "0", "--domains", "1", "--quiet"], { BOBBIN_BACKEND: name });
    try {
      const [, port] = await program.waitFor(/echo server on 127\.0\.0\.1:(\d+)/);
      const clients = await Promise.all(Array.from({ length: 40 }, () => Client.connect(Number(port))));
      await Promise.all(clients.map((c, i) => c.roundTrip(`client ${i}\n`)));
      for (const c of clients) c.end();
      await Promise.all(clients.map((c) => c.closed));
      program.child.kill("SIGINT");
      const exit = await program.end();
      expect(exit.code).toBe(0);
      const served = [...exit.stdout.matchAll(/domain (\d+): (\d+) connection/g)].map((m) => Number(m[2]));
      expect(served).toHaveLength(2);
      expect(served.reduce((x, y) => x + y, 0)).toBe(40);
      expect(exit.stdout).toMatch(/no socket left open/);
    } finally {
      program.kill();
    }
  });

  it.skipIf(parallel.ok)("node dist/ch08-echo.js --domains 1, where worker domains cannot listen: fails cleanly", async () => {
    const program = Program.start("ch08-echo.js", ["--port", "0", "--domains", "1", "--quiet"], { BOBBIN_BACKEND: name });
    const exit = await program.end();
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/the server failed/);
  });
});

describe("chapter 8: a client that resets its connection", () => {
  it("is gone, not an error: the server serves on", async () => {
    let port = 0;
    const stats = await run(function* () {
      const clients = B.spawn(function* () {
        yield* B.promise(async () => {
          while (port === 0) await delay(5);
          const rude = await Client.connect(port);
          await rude.roundTrip("bye\n");
          rude.socket.resetAndDestroy(); // RST
          await rude.closed;
          const polite = await Client.connect(port);
          await polite.roundTrip("hello\n");
          polite.end();
          await polite.closed;
          process.kill(process.pid, "SIGINT");
        });
      });
      const s = yield* echoServers({
        address: { host: "127.0.0.1", port: 0 },
        domains: 0,
        verbose: false,
        onListening: (a) => (port = "port" in a ? a.port : 0),
      });
      yield* B.awaitExn(clients);
      return s;
    });
    expect(stats[0]!.connections).toBe(2);
  });
});
