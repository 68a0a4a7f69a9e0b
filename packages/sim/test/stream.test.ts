import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { failure } from "@bobbin/test-support";
import {
  accept,
  bindAndListen,
  close,
  connect,
  read,
  readExactly,
  type Socket,
  SocketClosed,
  shutdown,
  sleep,
  tcpv4,
  unixSocket,
  write,
} from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { Sim } from "../src/index.js";
import { WINDOW } from "../src/stream.js";
import { pattern } from "./support/programs.js";

/** A world of a `server` that runs `serve` on each accepted connection and a client running `main`. */
function pair<T>(
  serve: (client: Socket) => Generator<B.Instruction, unknown, unknown>,
  main: () => Generator<B.Instruction, T, unknown>,
): Sim {
  const sim = new Sim({ seed: 1 });
  sim.network({ latency: 0.001 });
  sim.host("server", function* () {
    const s = tcpv4();
    yield* bindAndListen(s, { host: "0.0.0.0", port: 7 });
    const clients = B.orphans<unknown>();
    for (;;) {
      const [client] = yield* accept(s);
      B.spawn({ orphans: clients }, serve, client);
    }
  });
  sim.client("client", main);
  return sim;
}

function* dial(): Generator<B.Instruction, Socket, unknown> {
  const sock = tcpv4();
  yield* connect(sock, { host: "server", port: 7 });
  return sock;
}

describe("flow control", () => {
  it("a writer waits once the peer has a window's worth unread, and goes on as the peer reads", async () => {
    let serverRead = (): void => {};
    const sim = pair(
      function* (client) {
        const go = new L.Trigger();
        serverRead = () => go.signal();
        yield* go.wait();
        const buf = Buffer.alloc(3 * WINDOW);
        yield* readExactly(client, buf);
        return buf;
      },
      function* () {
        const sock = yield* dial();
        const data = pattern(1, 3 * WINDOW);
        const writer = B.spawn(function* () {
          yield* write(sock, data);
        });
        yield* sleep(5);
        const blocked = writer.status;
        serverRead();
        yield* B.awaitExn(writer);
        yield* close(sock);
        return blocked;
      },
    );
    expect(await sim.run()).toEqual(["pending"]);
  });
});

describe("operations in progress together", () => {
  it("two readers and two writers of one socket at once: each reader gets its bytes, every byte of both writers arrives", async () => {
    const sim = pair(
      function* (client) {
        const buf = Buffer.alloc(1);
        for (let i = 0; i < 100; i++) {
          yield* readExactly(client, buf); // one read at a time: the reused operation
          yield* write(client, buf);
        }
        const bufs = [Buffer.alloc(4), Buffer.alloc(4)];
        const readers = bufs.map((b) =>
          B.spawn(function* () {
            return yield* read(client, b);
          }),
        );
        for (const r of yield* B.awaitAll(readers)) expect(r.ok && r.value).toBe(4);
        expect(bufs.map(String).sort()).toEqual(["abcd", "efgh"]);
        // more than a window each: both wait for the client to read
        const writers = [1, 2].map((fill) =>
          B.spawn(function* () {
            yield* write(client, Buffer.alloc(WINDOW + 1000, fill));
          }),
        );
        for (const r of yield* B.awaitAll(writers)) if (!r.ok) throw r.error;
      },
      function* () {
        const sock = yield* dial();
        const echoed = Buffer.alloc(1);
        for (let i = 0; i < 100; i++) {
          yield* write(sock, Buffer.from([i]));
          yield* readExactly(sock, echoed);
          expect(echoed[0]).toBe(i);
        }
        yield* write(sock, Buffer.from("abcd"));
        yield* sleep(0.1);
        yield* write(sock, Buffer.from("efgh"));
        const both = Buffer.alloc(2 * (WINDOW + 1000));
        yield* readExactly(sock, both);
        yield* close(sock);
        return both;
      },
    );
    const [both] = (await sim.run()) as [Buffer];
    const counts = [0, 0, 0];
    for (const byte of both) counts[byte]! += 1;
    expect(counts).toEqual([0, WINDOW + 1000, WINDOW + 1000]);
  });
});

describe("ending a connection", () => {
  it("shutdown(send) makes the peer read 0 while the other direction still works (half-close)", async () => {
    const sim = pair(
      function* (client) {
        const buf = Buffer.alloc(64);
        let got = "";
        for (let n: number; (n = yield* read(client, buf)) > 0; ) got += buf.subarray(0, n).toString();
        expect(yield* read(client, buf)).toBe(0);
        yield* write(client, `got ${got}`);
        yield* close(client);
      },
      function* () {
        const sock = yield* dial();
        yield* write(sock, "question");
        shutdown(sock, "send");
        const thrown = yield* failure(() => write(sock, "more"));
        const buf = Buffer.alloc(64);
        let reply = "";
        for (let n: number; (n = yield* read(sock, buf)) > 0; ) reply += buf.subarray(0, n).toString();
        yield* close(sock);
        return [reply, thrown.code];
      },
    );
    expect(await sim.run()).toEqual([["got question", "EPIPE"]]);
  });

  it("closing with unread bytes resets the connection: the peer's read fails with ECONNRESET", async () => {
    const sim = pair(
      function* (client) {
        yield* sleep(1); // the client's bytes arrive, unread
        yield* close(client);
      },
      function* () {
        const sock = yield* dial();
        yield* write(sock, "never read");
        return (yield* failure(() => read(sock, Buffer.alloc(10)))).code;
      },
    );
    expect(await sim.run()).toEqual(["ECONNRESET"]);
  });

  it("writing to a peer that closed: the bytes meet an RST, and later writes fail with EPIPE", async () => {
    const sim = pair(
      function* (client) {
        yield* close(client);
      },
      function* () {
        const sock = yield* dial();
        yield* sleep(1);
        yield* write(sock, "first"); // taken: the peer's RST is on its way
        yield* sleep(1);
        return (yield* failure(() => write(sock, "second"))).code;
      },
    );
    expect(await sim.run()).toEqual(["EPIPE"]);
  });

  it("shutdown(receive) makes reads return 0 and drops what arrives", async () => {
    const sim = pair(
      function* (client) {
        yield* write(client, "ignored");
        yield* sleep(1);
        yield* write(client, "ignored too");
        yield* sleep(1);
        yield* close(client);
      },
      function* () {
        const sock = yield* dial();
        yield* sleep(0.5);
        shutdown(sock, "receive");
        const buf = Buffer.alloc(16);
        const first = yield* read(sock, buf);
        yield* sleep(1);
        const second = yield* read(sock, buf);
        yield* close(sock);
        return [first, second];
      },
    );
    expect(await sim.run()).toEqual([[0, 0]]);
  });

  it("closing a socket wakes its readers with SocketClosed", async () => {
    const sim = pair(
      function* () {
        yield* sleep(Infinity);
      },
      function* () {
        const sock = yield* dial();
        const reader = B.spawn(function* () {
          yield* read(sock, Buffer.alloc(1));
        });
        yield* sleep(1);
        yield* close(sock);
        const r = yield* B.awaitTask(reader);
        return !r.ok && r.error instanceof SocketClosed;
      },
    );
    expect(await sim.run()).toEqual([true]);
  });
});

describe("connecting", () => {
  it("nobody listening: ECONNREFUSED after one round trip, and the socket is fresh again", async () => {
    const sim = new Sim({ seed: 1 });
    sim.network({ latency: 0.005 });
    sim.host("server", function* () {
      yield* sleep(Infinity);
    });
    sim.client("client", function* () {
      const sock = tcpv4();
      const t0 = sim.now();
      const error = yield* failure(() => connect(sock, { host: "server", port: 7 }));
      return [error.code, sock.state, Math.round((sim.now() - t0) * 1000)];
    });
    expect(await sim.run()).toEqual([["ECONNREFUSED", "fresh", 10]]);
  });

  it("a full backlog drops SYNs: the client retries and gets in once the server accepts", async () => {
    const sim = new Sim({ seed: 1 });
    sim.network({ latency: 0.001 });
    sim.host("server", function* () {
      const s = tcpv4();
      yield* bindAndListen(s, { host: "0.0.0.0", port: 7 }, { backlog: 1 });
      yield* sleep(2);
      for (;;) yield* accept(s);
    });
    sim.client("client", function* () {
      const first = yield* dial(); // waits in the backlog
      const t0 = sim.now();
      const second = yield* dial(); // dropped, retried at 1 s, dropped, retried at 3 s
      const waited = sim.now() - t0;
      yield* close(first);
      yield* close(second);
      return waited;
    });
    const [waited] = (await sim.run()) as number[];
    expect(waited).toBeGreaterThan(3);
    expect(waited).toBeLessThan(3.01);
  });

  it("Unix sockets connect by path on their host; a missing path is ENOENT", async () => {
    const sim = new Sim({ seed: 1 });
    sim.client("local", function* () {
      const server = unixSocket();
      yield* bindAndListen(server, { path: "/run/app.sock" });
      const srv = B.spawn(function* () {
        const [client, peer] = yield* accept(server);
        const buf = Buffer.alloc(5);
        yield* readExactly(client, buf);
        yield* close(client);
        return [buf.toString(), peer];
      });
      const sock = unixSocket();
      yield* connect(sock, { path: "/run/app.sock" });
      yield* write(sock, "hello");
      const got = yield* B.awaitExn(srv);
      yield* close(sock);
      yield* close(server);
      const missing = yield* failure(() => connect(unixSocket(), { path: "/run/app.sock" }));
      return [got, missing.code];
    });
    expect(await sim.run()).toEqual([[["hello", { path: "" }], "ENOENT"]]);
  });
});

describe("resets", () => {
  it("sim.reset fails both ends: ECONNRESET for readers, EPIPE for writers", async () => {
    const sim = new Sim({ seed: 1 });
    sim.host("server", function* () {
      const s = tcpv4();
      yield* bindAndListen(s, { host: "0.0.0.0", port: 7 });
      const [client] = yield* accept(s);
      serverSaw = (yield* failure(() => read(client, Buffer.alloc(1)))).code;
      yield* close(client);
    });
    let serverSaw: string | undefined;
    sim.client("client", function* () {
      const sock = yield* dial();
      yield* sleep(1);
      sim.reset("client", "server");
      const code = (yield* failure(() => write(sock, "x"))).code;
      yield* sleep(1);
      return code;
    });
    expect(await sim.run()).toEqual(["EPIPE"]);
    expect(serverSaw).toBe("ECONNRESET");
  });
});
