import * as B from "@bobbin/core";
import { thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import {
  accept,
  bindAndListen,
  close,
  connect,
  getsockname,
  type InetAddress,
  read,
  readExactly,
  run,
  SocketClosed,
  shutdown,
  tcpv4,
  udpv4,
  write,
} from "../src/index.js";
import { connectedPair } from "./helpers.js";

describe("stream sockets", () => {
  it("shutdown('send') half-closes: the peer reads 0, then still answers", async () => {
    await run(function* () {
      const [a, b] = yield* connectedPair();
      yield* write(a, "question");
      shutdown(a, "send");
      const buf = Buffer.alloc(100);
      let got = "";
      for (let n: number; (n = yield* read(b, buf)) > 0; ) got += buf.toString("utf8", 0, n);
      expect(got).toBe("question");
      yield* write(b, "answer");
      yield* close(b);
      const n = yield* read(a, buf);
      expect(buf.toString("utf8", 0, n)).toBe("answer");
      const e = yield* (function* () {
        try {
          yield* write(a, "more");
        } catch (error) {
          return error as NodeJS.ErrnoException;
        }
        return null;
      })();
      expect(e?.code).toBe("EPIPE");
    });
  });

  it("shutdown('receive') makes reads return 0; shutdown needs a connected stream", async () => {
    await run(function* () {
      const [a, b, server] = yield* connectedPair();
      yield* write(b, "ignored");
      shutdown(a, "receive");
      expect(yield* read(a, Buffer.alloc(10))).toBe(0);
      expect(thrownBy(() => shutdown(a, "sideways" as never))).toBeInstanceOf(TypeError);
      expect((thrownBy(() => shutdown(tcpv4())) as NodeJS.ErrnoException).code).toBe("ENOTCONN");
      expect(thrownBy(() => shutdown(udpv4()))).toBeInstanceOf(TypeError);
      yield* close(a);
      expect(thrownBy(() => shutdown(a))).toBeInstanceOf(SocketClosed);
      yield* close(b);
      yield* close(server);
    });
  });

  it("writes strings as UTF-8; reads fill at most len bytes at off", async () => {
    await run(function* () {
      const [a, b] = yield* connectedPair();
      yield* write(a, "héllo");
      const buf = Buffer.alloc(10, ".");
      yield* readExactly(b, buf, 2, 6);
      expect(buf.toString()).toBe("..héllo..");
      expect(Buffer.byteLength("héllo")).toBe(6);
    });
  });

  it("two tasks reading one socket share its bytes without losing any", async () => {
    const total = await run(function* () {
      const [a, b] = yield* connectedPair();
      const received: number[] = [];
      const reader = function* (): Generator<B.Instruction, void, unknown> {
        const buf = Buffer.alloc(7);
        for (let n: number; (n = yield* read(b, buf)) > 0; ) received.push(...buf.subarray(0, n));
      };
      const r1 = B.spawn(reader);
      const r2 = B.spawn(reader);
      const data = Buffer.from(Array.from({ length: 5000 }, (_, i) => i & 0xff));
      for (let off = 0; off < data.length; off += 100) yield* write(a, data, off, 100);
      yield* close(a);
      yield* B.awaitExn(r1);
      yield* B.awaitExn(r2);
      return received.length;
    });
    expect(total).toBe(5000);
  });

  it("a socket read by one task and then another (the reused operation changes task)", async () => {
    await run(function* () {
      const [a, b] = yield* connectedPair();
      const buf = Buffer.alloc(3);
      const first = B.spawn(function* () {
        yield* readExactly(b, buf);
        return buf.toString();
      });
      yield* write(a, "one");
      expect(yield* B.awaitExn(first)).toBe("one");
      const second = B.spawn(function* () {
        yield* readExactly(b, buf);
        return buf.toString();
      });
      yield* write(a, "two");
      expect(yield* B.awaitExn(second)).toBe("two");
    });
  });

  it("hostnames are resolved in the socket's family", async () => {
    await run(function* () {
      const server = tcpv4();
      yield* bindAndListen(server, { host: "localhost", port: 0 });
      const { host, port } = getsockname(server) as InetAddress;
      expect(host).toBe("127.0.0.1");
      const acceptor = B.spawn(function* () {
        const [c, peer] = yield* accept(server);
        expect((peer as InetAddress).host).toBe("127.0.0.1");
        yield* close(c);
      });
      const sock = tcpv4();
      yield* connect(sock, { host: "localhost", port });
      yield* B.awaitExn(acceptor);
      yield* close(sock);
      yield* close(server);
    });
  });

  it("bindAndListen takes a backlog from 0 to 2^31 - 1 (listen(2)'s int), which the system clamps", async () => {
    await run(function* () {
      const addr = { host: "127.0.0.1", port: 0 };
      for (const backlog of [-1, 2 ** 31, 2 ** 53, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        const error = thrownBy(() => bindAndListen(tcpv4(), addr, { backlog })) as Error;
        expect(error, `backlog ${backlog}`).toBeInstanceOf(RangeError);
        expect(error.message).toMatch(/backlog must be an integer from 0 to 2147483647/);
      }
      const server = tcpv4();
      yield* bindAndListen(server, addr, { backlog: 2 ** 31 - 1 });
      expect(server.state).toBe("listening");
      yield* close(server);
    });
  });

  it("getsockname needs a bound socket", async () => {
    await run(function* () {
      const [a, , server] = yield* connectedPair();
      expect((getsockname(a) as InetAddress).host).toBe("127.0.0.1");
      expect((getsockname(server) as InetAddress).port).toBeGreaterThan(0);
      expect(thrownBy(() => getsockname(tcpv4()))).toBeInstanceOf(TypeError);
      yield* close(a);
      expect(thrownBy(() => getsockname(a))).toBeInstanceOf(SocketClosed);
    });
  });
});

describe("messages for numbers given as strings", () => {
  it('port: "3000" says it got a string and to pass the number, not "got 3000"', async () => {
    await run(function* () {
      const sock = tcpv4();
      const error = thrownBy(() => connect(sock, { host: "127.0.0.1", port: "3000" as unknown as number })) as Error;
      expect(error).toBeInstanceOf(RangeError);
      expect(error.message).toBe('connect(): port must be a number, an integer in [1, 65535]; got "3000": pass the number 3000');
      yield* close(sock);
    });
  });

  it("off and len given as strings say so too", async () => {
    await run(function* () {
      const [client, peer, server] = yield* connectedPair();
      const buf = Buffer.alloc(8);
      expect((thrownBy(() => read(client, buf, "2" as unknown as number)) as Error).message).toBe(
        'read(): off must be an integer ≥ 0, got "2": pass the number 2',
      );
      expect((thrownBy(() => write(client, buf, 0, "4" as unknown as number)) as Error).message).toBe(
        'write(): len must be an integer ≥ 0, got "4": pass the number 4',
      );
      for (const s of [client, peer, server]) yield* close(s);
    });
  });
});
