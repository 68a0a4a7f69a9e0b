import { AsyncLocalStorage } from "node:async_hooks";
import { spawn } from "node:child_process";
import * as B from "@bobbin/core";
import { openFds } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { LibuvBackend } from "../../src/backend/index.js";
import {
  accept,
  bindAndListen,
  close,
  connect,
  getsockname,
  type InetAddress,
  libuv,
  read,
  readExactly,
  run,
  type Socket,
  shutdown,
  sleep,
  tcpv4,
  write,
} from "../../src/index.js";
import type { UvSocket } from "../../src/libuv/socket.js";
import { HIGH_WATER } from "../../src/libuv/stream.js";
import { expectRange } from "../helpers.js";

function* pair(): Generator<B.Instruction, [Socket, Socket], unknown> {
  const server = tcpv4();
  yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
  const { port } = getsockname(server) as InetAddress;
  const acceptor = B.spawn(function* () {
    return (yield* accept(server))[0];
  });
  const client = tcpv4();
  yield* connect(client, { host: "127.0.0.1", port });
  const peer = yield* B.awaitExn(acceptor);
  yield* close(server);
  return [client, peer];
}

/**
 * A child process that opens `n` connections to `port`, sends one byte on
 * each, and prints "settled" once every attempt connected or failed; it
 * keeps its connections until its stdin closes (bounded: 20 s).
 */
function flood(port: number, n: number) {
  const child = spawn(
    process.execPath,
    [
      "-e",
      `const net = require("net"); let left = ${n}; const all = [];
      const done = () => { if (--left === 0) console.log("settled"); };
      for (let i = 0; i < ${n}; i++) {
        const c = net.connect(${port}, "127.0.0.1");
        all.push(c);
        let once = false;
        const settle = () => { if (!once) { once = true; done(); } };
        c.on("connect", () => { c.write("x"); settle(); });
        c.on("error", settle);
        c.on("close", settle);
      }
      process.stdin.on("data", () => {}).on("end", () => process.exit(0));
      setTimeout(() => process.exit(0), 20000).unref();`,
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  return { settled: () => out.includes("settled"), stop: () => child.stdin.end() };
}

describe("the libuv backend", () => {
  it("holds at most `backlog` connections nobody accepted, and reads none of them before accept", async () => {
    await run(function* () {
      const server = tcpv4();
      const backlog = 16;
      yield* bindAndListen(server, { host: "127.0.0.1", port: 0 }, { backlog });
      const { port } = getsockname(server) as InetAddress;
      const before = openFds()!;
      const clients = flood(port, 300);
      try {
        // Each attempt connects (and is then held or turned away) or waits in the kernel's queue: give them time to arrive.
        for (let i = 0; i < 1000 && !clients.settled(); i++) yield* sleep(0.01);
        yield* sleep(0.2);
        const held = (server as unknown as UvSocket).listener!.backlog;
        expect(held.length).toBeLessThanOrEqual(backlog);
        // The held connections, plus at most the one Node is handing over: nothing else of the 300 stays open here.
        expect(openFds()! - before).toBeLessThanOrEqual(backlog + 2);
        for (const s of held) {
          expect(s.stream!.isPaused()).toBe(true);
          expect(s.queued).toBe(0);
        }
        // Accepting one starts reading it: its byte arrives.
        const [conn] = yield* accept(server);
        const buf = Buffer.alloc(1);
        yield* readExactly(conn, buf);
        expect(buf.toString()).toBe("x");
        yield* close(conn);
      } finally {
        clients.stop();
      }
      yield* close(server);
    });
  });

  it("works with either flush mode", async () => {
    for (const flush of ["immediate", "microtask"] as const) {
      const echoed = await run(
        function* () {
          const [a, b] = yield* pair();
          const buf = Buffer.alloc(64);
          for (let i = 0; i < 100; i++) {
            yield* write(a, buf);
            yield* readExactly(b, buf);
            yield* write(b, buf);
            yield* readExactly(a, buf);
          }
          return flush;
        },
        { backend: () => libuv({ flush }) },
      );
      expect(echoed).toBe(flush);
    }
  });

  it("with each callback's readiness handed over at once, a task's AsyncLocalStorage store is still its own after a read and a sleep", async () => {
    const als = new AsyncLocalStorage<string>();
    const seen = await run(
      function* () {
        const [a, b] = yield* pair();
        const reader = B.spawn(function* () {
          als.enterWith("reader");
          const buf = Buffer.alloc(1);
          yield* read(b, buf);
          const afterRead = als.getStore();
          yield* sleep(0.001);
          return [afterRead, als.getStore()];
        });
        const writer = B.spawn(function* () {
          als.enterWith("writer");
          yield* sleep(0.001);
          yield* write(a, "x");
          return als.getStore();
        });
        const seen = [yield* B.awaitExn(reader), yield* B.awaitExn(writer), als.getStore()];
        yield* close(a);
        yield* close(b);
        return seen;
      },
      { backend: () => libuv({ flush: "microtask" }) },
    );
    expect(seen).toEqual([["reader", "reader"], "writer", undefined]);
  });

  it("asks core to run the fibers a loop phase woke in one slice, unless flushed per callback", () => {
    expect(libuv().batchWakes).toBe(true);
    expect(libuv({ flush: "immediate" }).batchWakes).toBe(true);
    expect(libuv({ flush: "microtask" }).batchWakes).toBe(false);
  });

  it("stops reading from the system while a socket's queue is full, and resumes when it drains", async () => {
    await run(function* () {
      const [a, b] = yield* pair();
      const total = 4 * 1024 * 1024;
      const writer = B.spawn(function* () {
        yield* write(a, Buffer.alloc(total, 7));
        yield* close(a);
      });
      // Nobody reads b meanwhile: its queue fills up and the backend stops reading (bounded wait: the machine may be busy).
      const s = b as unknown as UvSocket;
      for (let i = 0; i < 500 && !s.paused; i++) yield* sleep(0.01);
      expect(s.paused).toBe(true);
      expect(s.queued).toBeLessThan(HIGH_WATER * 2);
      const buf = Buffer.alloc(64 * 1024);
      let got = 0;
      for (let n: number; (n = yield* read(b, buf)) > 0; ) got += n;
      expect(got).toBe(total);
      yield* B.awaitExn(writer);
    });
  });

  it("sleep(0) lets other tasks run; sleep never returns early", async () => {
    await run(function* () {
      const order: string[] = [];
      const other = B.spawn(function* () {
        order.push("other");
      });
      yield* sleep(0);
      order.push("after sleep(0)");
      yield* B.awaitExn(other);
      expect(order).toEqual(["other", "after sleep(0)"]);
      for (const s of [0.005, 0.02]) {
        const t0 = performance.now();
        yield* sleep(s);
        expectRange(performance.now() - t0, s * 1000, s * 1000 + 500);
      }
    });
  });

  it("accept tells each connection's peer, two tasks accepting at once on one listener; the Node socket keeps no copy of it", async () => {
    await run(function* () {
      const server = tcpv4();
      yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
      const { port } = getsockname(server) as InetAddress;
      const acceptors = [0, 1].map(() =>
        B.spawn(function* () {
          return yield* accept(server);
        }),
      );
      const clients = [tcpv4(), tcpv4()];
      for (const c of clients) yield* connect(c, { host: "127.0.0.1", port });
      const accepted = [];
      for (const t of acceptors) accepted.push(yield* B.awaitExn(t));
      const peers = accepted.map(([, peer]) => (peer as InetAddress).port).sort();
      const own = clients.map((c) => (getsockname(c) as InetAddress).port).sort();
      expect(peers).toEqual(own);
      for (const [sock, peer] of accepted) {
        expect((peer as InetAddress).host).toBe("127.0.0.1");
        const stream = (sock as UvSocket).stream! as unknown as { _peername?: unknown };
        expect(stream._peername ?? null, "Node's cached peer address").toBeNull();
        yield* close(sock);
      }
      for (const c of clients) yield* close(c);
      yield* close(server);
    });
  });

  it("a connection's Node socket holds one 'end' listener (Node's own runs from Bobbin's); an end arrives and the other direction stays open", async () => {
    await run(function* () {
      const [client, peer] = yield* pair();
      for (const s of [client, peer]) expect((s as UvSocket).stream!.listenerCount("end")).toBe(1);
      shutdown(client, "send");
      const buf = Buffer.alloc(8);
      expect(yield* read(peer, buf)).toBe(0);
      yield* write(peer, Buffer.from("bye"));
      expect(buf.subarray(0, yield* read(client, buf)).toString()).toBe("bye");
      yield* close(client);
      yield* close(peer);
    });
  });

  it("drain closes what is left and settles once every handle is gone", async () => {
    let backend: LibuvBackend | null = null;
    await run(
      function* () {
        yield* pair();
        expect(backend!.live.size).toBe(2);
      },
      { backend: () => (backend = new LibuvBackend()) },
    );
    expect(backend!.live.size).toBe(0);
  });
});
