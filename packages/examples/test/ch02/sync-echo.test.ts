import { delay } from "@bobbin/test-support";
import { afterEach, describe, expect, it, vi } from "vitest";
import { server } from "../../src/ch02/echo.js";
import { getsockname, listen, openDescriptors } from "../../src/support/pocket-unix.js";
import { Client } from "../support/net.js";
import { Program } from "../support/processes.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("chapter 2: the synchronous echo server", () => {
  it("echoes one client, then terminates", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const socket = await listen({ host: "127.0.0.1", port: 0 });
    const done = server(socket, 1);
    const client = await Client.connect(getsockname(socket).port);
    await client.roundTrip("Hello World\n");
    client.end();
    await client.closed;
    await done;
    expect(client.text).toBe("Hello World\n");
    expect(log).toHaveBeenCalledWith("Server terminated");
    expect(openDescriptors()).toBe(0);
  });

  it("its problem: a second client waits while the first one is connected", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const socket = await listen({ host: "127.0.0.1", port: 0 });
    const done = server(socket, 2);
    const { port } = getsockname(socket);

    const first = await Client.connect(port); // `netcat localhost 3000 &`, then silent
    await first.roundTrip("I am here\n");
    const second = await Client.connect(port); // `echo "Hello World" | netcat -q0 localhost 3000`
    second.send("Hello World\n");
    second.end();
    await delay(300);
    expect(second.text).toBe(""); // stuck: the server is busy reading from the first client

    first.end(); // the first client leaves...
    await first.closed;
    await second.waitFor((t) => t === "Hello World\n"); // ...and only now is the second one served
    await second.closed;
    await done;
    expect(openDescriptors()).toBe(0);
  });

  it("node dist/ch02-sync-echo.js --once", async () => {
    const program = Program.start("ch02-sync-echo.js", ["--port", "0", "--once"]);
    try {
      const [, port] = await program.waitFor(/on 127\.0\.0\.1:(\d+)/);
      const client = await Client.connect(Number(port));
      await client.roundTrip("Hello World\n");
      client.end();
      const exit = await program.end();
      expect(exit.code).toBe(0);
      expect(exit.stdout).toContain("Server terminated");
    } finally {
      program.kill();
    }
  });
});
