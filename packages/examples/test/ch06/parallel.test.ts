import { readdirSync } from "node:fs";
import { run } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { servers } from "../../src/ch06/parallel.js";
import { Client } from "../support/net.js";
import { Program } from "../support/processes.js";
import { startServer } from "../support/servers.js";

describe("chapter 6: the echo server on every domain", () => {
  it("node dist/ch06-parallel.js: serves, on as many domains as can listen", async () => {
    const program = Program.start("ch06-parallel.js", ["--port", "0"]);
    try {
      const [, port, domains] = await program.waitFor(/echo server on 127\.0\.0\.1:(\d+), dom0 \+ (\d+) worker domain/);
      if (Number(domains) === 0) expect(program.stdout).toMatch(/dom0 only: worker domains cannot listen here/);
      const clients = await Promise.all(Array.from({ length: 20 }, () => Client.connect(Number(port))));
      await Promise.all(clients.map((c, i) => c.roundTrip(`hello ${i}\n`)));
      for (const c of clients) c.end();
      await Promise.all(clients.map((c) => c.closed));
      // The book counts threads: Node has a few of its own, plus one per worker domain.
      const threads = readdirSync(`/proc/${program.child.pid}/task`).length;
      expect(threads).toBeGreaterThanOrEqual(Number(domains) + 1);
    } finally {
      program.kill();
    }
  });
});

describe("chapter 6: servers()", () => {
  it("with domains = 0, dom0 serves alone", async () => {
    const s = await startServer((ready) => servers({ host: "127.0.0.1", port: 0 }, ready, 0));
    try {
      const c = await Client.connect(s.port);
      await c.roundTrip("hello\n");
      c.end();
      await c.closed;
    } finally {
      await s.stop();
    }
  });

  it("a server that cannot listen fails the program instead of hanging", async () => {
    const taken = await startServer((ready) => servers({ host: "127.0.0.1", port: 0 }, ready, 0));
    try {
      await expect(
        run(function* () {
          yield* servers({ host: "127.0.0.1", port: taken.port }, undefined, 0);
        }),
      ).rejects.toMatchObject({ code: "EADDRINUSE" });
    } finally {
      await taken.stop();
    }
  });
});
