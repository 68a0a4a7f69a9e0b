import { existsSync, readdirSync } from "node:fs";
import { run } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { servers } from "../../src/ch06/parallel.js";
import { Client } from "../support/net.js";
import { Program } from "../support/processes.js";
import { startServer } from "../support/servers.js";

describe("chapter 6: the echo server on every domain", () => {
  const noProc = existsSync("/proc") ? "" : ` (skipped: it counts the program's threads in /proc, Linux's; this is ${process.platform})`;
  it.skipIf(noProc !== "")(`node dist/ch06-parallel.js --domains 1: dom0 and a worker domain accept on one socket${noProc}`, async () => {
    const program = Program.start("ch06-parallel.js", ["--port", "0", "--domains", "1"]);
    try {
      const [, port] = await program.waitFor(/echo server on 127\.0\.0\.1:(\d+), dom0 \+ 1 worker domain/);
      const clients = await Promise.all(Array.from({ length: 20 }, () => Client.connect(Number(port))));
      await Promise.all(clients.map((c, i) => c.roundTrip(`hello ${i}\n`)));
      for (const c of clients) c.end();
      await Promise.all(clients.map((c) => c.closed));
      // The book counts threads: Node has a few of its own, plus one per worker domain.
      const threads = readdirSync(`/proc/${program.child.pid}/task`).length;
      expect(threads).toBeGreaterThanOrEqual(2);
    } finally {
      program.kill();
    }
  });
});

describe("chapter 6: servers()", () => {
  it.each([0, 1])("with %i worker domain(s), echoes; cancelling it stops every server", async (domains) => {
    const s = await startServer((ready) => servers({ host: "127.0.0.1", port: 0 }, ready, domains), undefined, domains);
    try {
      const clients = await Promise.all(Array.from({ length: 10 }, () => Client.connect(s.port)));
      await Promise.all(clients.map((c, i) => c.roundTrip(`hello ${i}\n`)));
      for (const c of clients) c.end();
      await Promise.all(clients.map((c) => c.closed));
    } finally {
      await s.stop();
    }
    await expect(Client.connect(s.port)).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("a server that cannot listen fails the program instead of hanging", async () => {
    const taken = await startServer((ready) => servers({ host: "127.0.0.1", port: 0 }, ready, 0));
    try {
      await expect(
        run(
          function* () {
            yield* servers({ host: "127.0.0.1", port: taken.port }, undefined, 1);
          },
          { domains: 1 },
        ),
      ).rejects.toMatchObject({ code: "EADDRINUSE" });
    } finally {
      await taken.stop();
    }
  });
});
