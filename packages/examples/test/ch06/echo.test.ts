import * as B from "@bobbin/core";
import { delay } from "@bobbin/test-support";
import { OwnedSockets, run } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import * as Plain from "../../src/ch06/echo.js";
import * as Owned from "../../src/ch06/ownership.js";
import { liveSocketHandles, openSockets } from "../../src/support/fds.js";
import { Client, settledFds } from "../support/net.js";
import { Program } from "../support/processes.js";
import { backends, startServer } from "../support/servers.js";

const ADDR = { host: "127.0.0.1", port: 0 };

describe.each(await backends())("chapter 6 on the %s backend", (_name, backend) => {
  describe.each([
    ["with orphans", Plain.server],
    ["with OwnedSockets", Owned.server],
  ])("the echo server %s", (_what, server) => {
    it("echoes, serves a client while another one is connected, and releases every socket when stopped", async () => {
      const fds = await settledFds(openSockets);
      const handles = liveSocketHandles();
      const s = await startServer((ready) => server(ADDR, ready), backend);
      const first = await Client.connect(s.port);
      await first.roundTrip("Salut\n");
      const second = await Client.connect(s.port);
      second.send("Hello\n");
      second.end();
      await second.waitFor((t) => t === "Hello\n");
      await second.closed; // the server closed it after the end of the stream
      await first.roundTrip("encore\n");
      await s.stop(); // the first client is still connected: its task is cancelled and closes it
      await first.closed;
      expect(first.text).toBe("Salut\nencore\n");
      expect(liveSocketHandles()).toBe(handles);
      if (fds !== null) expect(await settledFds(openSockets)).toBe(fds);
    });

    it("50 clients at once, each echoed what it sent", async () => {
      const s = await startServer((ready) => server(ADDR, ready), backend);
      try {
        const clients = await Promise.all(Array.from({ length: 50 }, () => Client.connect(s.port)));
        await Promise.all(clients.map((c, i) => c.roundTrip(`client ${i}: ${"x".repeat(i * 20)}\n`)));
        for (const c of clients) c.end();
        await Promise.all(clients.map((c) => c.closed));
        for (const [i, c] of clients.entries()) expect(c.text).toBe(`client ${i}: ${"x".repeat(i * 20)}\n`);
      } finally {
        await s.stop();
      }
    });
  });

  it("Ownership: a task that was not given the socket cannot use it (NotOwner)", async () => {
    await expect(
      run(
        function* () {
          const socket = OwnedSockets.tcpv4();
          const child = B.spawn(function* () {
            yield* OwnedSockets.bindAndListen(socket, ADDR); // the socket is the parent's
          });
          const r = yield* B.awaitTask(child);
          yield* OwnedSockets.close(socket);
          if (!r.ok) throw r.error;
        },
        { backend },
      ),
    ).rejects.toBeInstanceOf(B.NotOwner);
  });

  it("OwnedSockets: a task that ends still owning a socket fails the run (ResourceLeaked)", async () => {
    await expect(
      run(
        function* () {
          OwnedSockets.tcpv4();
        },
        { backend },
      ),
    ).rejects.toBeInstanceOf(B.ResourceLeaked);
  });
});

describe("chapter 6 programs", () => {
  it.each(["ch06-echo.js", "ch06-ownership.js"])("node dist/%s", async (file) => {
    const program = Program.start(file, ["--port", "0"]);
    try {
      await program.waitFor(/^backend: (native|libuv)/m);
      const [, port] = await program.waitFor(/echo server on 127\.0\.0\.1:(\d+)/);
      const c = await Client.connect(Number(port));
      await c.roundTrip("Hello\n");
      c.end();
      await c.closed;
      await delay(10);
    } finally {
      program.kill();
    }
  });
});
