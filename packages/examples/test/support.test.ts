/** The programs' shared modules (src/support/). */

import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { formatAddress } from "../src/support/address.js";
import { chooseBackend } from "../src/support/backend.js";
import { diffFds, fdTable, openSockets } from "../src/support/fds.js";
import { Random } from "../src/support/random.js";
import { Client } from "./support/net.js";

describe("chooseBackend", () => {
  it("BOBBIN_BACKEND=libuv forces libuv; the default says why it chose", async () => {
    expect(await chooseBackend("libuv")).toMatchObject({ name: "libuv", choice: "libuv" });
    const chosen = await chooseBackend(undefined);
    expect(["native", "libuv"]).toContain(chosen.name);
    expect(chosen.reason).not.toBe("");
  });

  it("BOBBIN_BACKEND=<module>#<export> loads any backend module: a package, or a path from the current directory", async () => {
    const fromPackage = await chooseBackend("@bobbin/unix#libuv");
    expect(fromPackage).toMatchObject({ name: "libuv", reason: "BOBBIN_BACKEND=@bobbin/unix#libuv", choice: "@bobbin/unix#libuv" });
    const path = `./${relative(process.cwd(), fileURLToPath(new URL("../dist/poll-backend/backend.js", import.meta.url)))}`;
    const fromPath = await chooseBackend(`${path}#pollBackend`);
    expect(fromPath.name).toBe("pollBackend");
    expect(typeof fromPath.factory).toBe("function");
  });

  it("refuses a name that is no backend, and a module without that export, saying what it takes", async () => {
    await expect(chooseBackend("epoll")).rejects.toThrow(/"libuv", "native", "uring" or a backend module as "<module>#<export>"/);
    await expect(chooseBackend("@bobbin/unix#nope")).rejects.toThrow(/exports no backend factory named nope/);
  });
});

describe("fds", () => {
  const noProc = existsSync("/proc/self/fd")
    ? ""
    : ` (skipped: no /proc/self/fd on ${process.platform}; releaseReport counts socket handles there)`;
  it.skipIf(noProc !== "")(`sees a socket open and closed (Linux: /proc/self/fd)${noProc}`, async () => {
    const before = fdTable()!;
    const server = createServer((s) => s.end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const c = await Client.connect(port);
    expect(diffFds(before, fdTable()!).sockets).toBeGreaterThanOrEqual(2); // listener, client (and the accepted one)
    await c.closed;
    await new Promise((resolve) => server.close(resolve));
    expect(diffFds(before, fdTable()!).sockets).toBe(0);
    expect(openSockets()).toBe([...before.values()].filter((w) => w.startsWith("socket:")).length);
  });

  it("compares by kind: the same kinds at other numbers are not new", () => {
    const before = new Map([
      [3, "socket:[1]"],
      [4, "anon_inode:[eventpoll]"],
    ]);
    const after = new Map([
      [5, "socket:[2]"],
      [6, "anon_inode:[eventpoll]"],
      [7, "/dev/null"],
    ]);
    expect(diffFds(before, after)).toEqual({ sockets: 0, others: ["/dev/null"] });
  });
});

describe("small things", () => {
  it("Random is reproducible from its seed and stays in bounds", () => {
    const a = new Random(42);
    const b = new Random(42);
    const xs = Array.from({ length: 100 }, () => a.int(6));
    expect(Array.from({ length: 100 }, () => b.int(6))).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 6)).toBe(true);
    expect(new Set(xs).size).toBe(6);
  });

  it("formatAddress", () => {
    expect(formatAddress({ host: "127.0.0.1", port: 3000 })).toBe("127.0.0.1:3000");
    expect(formatAddress({ host: "::1", port: 3000 })).toBe("[::1]:3000");
    expect(formatAddress({ path: "/tmp/s" })).toBe("/tmp/s");
  });
});
