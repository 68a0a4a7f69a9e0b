// What a task waiting on a socket, a sleep or a stream says in a dump (`B.dump()`).

import { createServer, type Socket as NetSocket, connect as netConnect, type Server } from "node:net";
import { PassThrough } from "node:stream";
import * as B from "@bobbin/core";
import { waitsOf } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { accept, bindAndListen, close, connect, fromStream, getsockname, type InetAddress, read, run, sleep, tcpv4 } from "../src/index.js";

describe("dumps: what a task waits on", () => {
  it("a read names the socket's ends; accept the listening socket; a sleep the time left", async () => {
    const seen = await run(function* main() {
      const server = tcpv4();
      yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
      const { port } = getsockname(server) as InetAddress;
      const acceptor = B.spawn(function* acceptor() {
        return (yield* accept(server))[0];
      });
      const client = tcpv4();
      yield* connect(client, { host: "127.0.0.1", port });
      const peer = yield* B.awaitExn(acceptor);
      const tasks = [
        B.spawn(function* reader() {
          yield* read(client, Buffer.alloc(8));
        }),
        B.spawn(function* second() {
          yield* accept(server);
        }),
        B.spawn(function* sleeper() {
          yield* sleep(30);
        }),
      ];
      yield* sleep(0.02);
      const d = yield* B.promise(() => B.dump());
      for (const t of tasks) yield* B.cancel(t);
      for (const s of [client, peer, server]) yield* close(s);
      return { waits: waitsOf(d), port };
    });
    expect(seen.waits.reader).toMatch(new RegExp(`^read tcp4 127\\.0\\.0\\.1:\\d+ ← 127\\.0\\.0\\.1:${seen.port}$`));
    expect(seen.waits.second).toBe(`accept tcp4 127.0.0.1:${seen.port} (listening)`);
    expect(seen.waits.sleeper).toMatch(/^sleep, (29|30)(\.\d)? s left$/);
  });

  it("an operation on a stream names the stream, and its ends for a network one", async () => {
    const server: Server = createServer((s) => s.pause());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const netSocket: NetSocket = netConnect(port, "127.0.0.1");
    await new Promise((resolve) => netSocket.once("connect", resolve));
    try {
      const seen = await run(function* main() {
        const pipe = fromStream(new PassThrough());
        const net = fromStream(netSocket);
        const tasks = [
          B.spawn(function* pipeReader() {
            yield* read(pipe, Buffer.alloc(4));
          }),
          B.spawn(function* netReader() {
            yield* read(net, Buffer.alloc(4));
          }),
        ];
        yield* sleep(0.02);
        const d = yield* B.promise(() => B.dump());
        for (const t of tasks) yield* B.cancel(t);
        yield* close(pipe);
        yield* close(net);
        return waitsOf(d);
      });
      expect(seen.pipeReader).toBe("read stream PassThrough");
      expect(seen.netReader).toMatch(new RegExp(`^read stream Socket 127\\.0\\.0\\.1:\\d+ ← 127\\.0\\.0\\.1:${port}$`));
    } finally {
      netSocket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
