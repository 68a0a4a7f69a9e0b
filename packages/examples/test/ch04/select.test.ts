import { until } from "@bobbin/test-support";
import { afterEach, describe, expect, it, vi } from "vitest";
import { acceptOnce, echoServer, monitor } from "../../src/ch04/programs.js";
import { getsockname, listen, openDescriptors } from "../../src/support/pocket-unix.js";
import { Client } from "../support/net.js";
import { Program } from "../support/processes.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("chapter 4: select-based I/O on the toy scheduler", () => {
  it("our_accept on its own: select every 10 ms until a client arrives", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const socket = await listen({ host: "127.0.0.1", port: 0 });
    const done = monitor(socket);
    const monitors = (): number => log.mock.calls.filter((c) => c[0] === "Monitor our file-descriptor.").length;
    // Three selects without a client (on a loaded machine 100 ms may see fewer: waiting for them, not for a time).
    await until(() => monitors() >= 3, { ms: 10_000, what: "three selects" });
    const client = await Client.connect(getsockname(socket).port);
    await done;
    await client.closed;
    expect(monitors()).toBeGreaterThanOrEqual(3);
    expect(openDescriptors()).toBe(0);
  });

  it("the toy scheduler accepts one client without blocking, and ends", async () => {
    const socket = await listen({ host: "127.0.0.1", port: 0 });
    const done = acceptOnce(socket);
    const client = await Client.connect(getsockname(socket).port);
    await done;
    await client.closed;
    expect(openDescriptors()).toBe(0);
  });

  it("the asynchronous echo server serves a second client while the first is connected", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const socket = await listen({ host: "127.0.0.1", port: 0 });
    const done = echoServer(socket, 2);
    const { port } = getsockname(socket);

    const first = await Client.connect(port);
    await first.roundTrip("Salut\n");
    const second = await Client.connect(port);
    second.send("Hello\n");
    second.end();
    await second.waitFor((t) => t === "Hello\n"); // served although the first is still connected
    await second.closed;
    await first.roundTrip("still here\n");
    first.end();
    await first.closed;
    await done;
    expect(first.text).toBe("Salut\nstill here\n");
    expect(log).toHaveBeenCalledWith("Server terminated");
    expect(openDescriptors()).toBe(0);
  });

  it("echoes more than a buffer's worth (0x100 bytes) in order", async () => {
    const socket = await listen({ host: "127.0.0.1", port: 0 });
    const done = echoServer(socket, 1);
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const client = await Client.connect(getsockname(socket).port);
    const payload = Array.from({ length: 2000 }, (_, i) => String.fromCharCode(33 + (i % 90))).join("");
    await client.roundTrip(payload);
    client.end();
    await client.closed;
    await done;
    expect(client.text).toBe(payload);
  });

  it("node dist/ch04-select.js echo", async () => {
    const program = Program.start("ch04-select.js", ["echo", "--port", "0"]);
    try {
      const [, port] = await program.waitFor(/listening on 127\.0\.0\.1:(\d+)/);
      const [a, b] = await Promise.all([Client.connect(Number(port)), Client.connect(Number(port))]);
      await Promise.all([a.roundTrip("Salut\n"), b.roundTrip("Hello\n")]);
      a.end();
      b.end();
      await Promise.all([a.closed, b.closed]);
    } finally {
      program.kill();
    }
  });
});
