/** Failures (refused, reset, broken pipe, misuse) are errors of the task that met them only. */

import * as net from "node:net";
import { join } from "node:path";
import * as B from "@bobbin/core";
import {
  type Address,
  accept,
  bindAndListen,
  close,
  connect,
  EndOfFile,
  getsockname,
  type InetAddress,
  read,
  readExactly,
  recvfrom,
  type Socket,
  SocketClosed,
  sendto,
  sleep,
  tcpv4,
  udpv4,
  unixSocket,
  write,
} from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { echoOnce, echoServer, errorOf, failure, LO4, LO6, loopbackListener, pattern, roundTrip, thrown } from "./support.js";

/** @internal */
export function failureTests(suite: Suite): void {
  describe("failures are errors of the task that met them", () => {
    it("connect to a closed port: ECONNREFUSED, and the socket is fresh again", async () => {
      await suite.leakFree(function* () {
        const probe = tcpv4();
        yield* bindAndListen(probe, { host: LO4, port: 0 });
        const { port } = getsockname(probe) as InetAddress;
        yield* close(probe);
        const sock = tcpv4();
        const error = yield* failure(() => connect(sock, { host: LO4, port }));
        expect(error.code, "connect to a port nobody listens on fails with ECONNREFUSED").toBe("ECONNREFUSED");
        expect(sock.state, 'a failed connect leaves the socket "fresh" (it can connect again)').toBe("fresh");
        // the same socket can try again
        const server = tcpv4();
        yield* bindAndListen(server, { host: LO4, port: 0 });
        const again = (getsockname(server) as InetAddress).port;
        const srv = B.spawn(echoServer, server, 1);
        yield* connect(sock, { host: LO4, port: again });
        yield* roundTrip(sock, pattern(3, 10));
        yield* close(sock);
        yield* B.awaitExn(srv);
        yield* close(server);
      });
    });

    it("connect to a missing Unix socket: ENOENT", async () => {
      await suite.leakFree(function* () {
        const sock = unixSocket();
        const error = yield* failure(() => connect(sock, { path: join(suite.dir(), "missing.sock") }));
        expect(error.code, "connect to a missing Unix socket path fails with ENOENT").toBe("ENOENT");
        yield* close(sock);
      });
    });

    it("binding an address in use: EADDRINUSE, and the socket can bind elsewhere", async () => {
      await suite.leakFree(function* () {
        const a = tcpv4();
        yield* bindAndListen(a, { host: LO4, port: 0 });
        const { port } = getsockname(a) as InetAddress;
        const b = tcpv4();
        const error = yield* failure(() => bindAndListen(b, { host: LO4, port }));
        expect(error.code, "binding an address in use fails with EADDRINUSE").toBe("EADDRINUSE");
        expect(b.state, 'a failed bind leaves the socket "fresh"').toBe("fresh");
        yield* bindAndListen(b, { host: LO4, port: 0 });
        expect(b.state, "a socket whose bind failed binds elsewhere").toBe("listening");
        yield* close(a);
        yield* close(b);
      });
    });

    it("end of stream: read returns 0 (again and again), readExactly throws EndOfFile", async () => {
      await suite.leakFree(function* () {
        const [server, port] = yield* loopbackListener();
        const peer = B.spawn(function* () {
          const [client] = yield* accept(server);
          yield* write(client, "abc");
          yield* close(client);
        });
        const sock = tcpv4();
        yield* connect(sock, { host: LO4, port });
        const buf = Buffer.alloc(10);
        const error = (yield* failure(() => readExactly(sock, buf))) as unknown as EndOfFile;
        expect(error, "readExactly past the end of the stream throws EndOfFile").toBeInstanceOf(EndOfFile);
        expect(error.read, "EndOfFile says how many bytes were read").toBe(3);
        expect(error.wanted, "EndOfFile says how many were wanted").toBe(10);
        expect(buf.subarray(0, 3).toString(), "the bytes read before the end are in the buffer").toBe("abc");
        expect(yield* read(sock, buf), "read at the end of the stream returns 0").toBe(0);
        expect(yield* read(sock, buf), "and again: the end of the stream is not consumed").toBe(0);
        yield* B.awaitExn(peer);
        yield* close(sock);
        yield* close(server);
      });
    });

    it.skipIf(!suite.systemSockets)("reset by peer fails the reading task only; the server goes on", async () => {
      await suite.leakFree(function* () {
        const [server, port] = yield* loopbackListener();
        const results = B.spawn(function* () {
          const handlers: B.Task<number>[] = [];
          for (let i = 0; i < 2; i++) {
            const [client] = yield* accept(server);
            handlers.push(B.spawn(echoOnce, client, 4096));
          }
          return yield* B.awaitAll(handlers);
        });
        // a plain Node client that resets its connection after sending
        const rude = yield* B.promise(
          () =>
            new Promise<void>((resolve, reject) => {
              const c = net.connect({ host: LO4, port }, () => {
                c.write("x");
                setTimeout(() => c.resetAndDestroy(), 20);
              });
              c.on("error", reject);
              c.on("close", () => resolve()); // its handle is gone
            }),
        );
        void rude;
        const sock = tcpv4();
        yield* connect(sock, { host: LO4, port });
        yield* roundTrip(sock, pattern(8, 1000));
        yield* close(sock);
        const [first, second] = yield* B.awaitExn(results);
        const codes = [first!, second!].map((r) => (r.ok ? "ok" : (r.error as NodeJS.ErrnoException).code));
        expect(codes.sort(), "the reset connection's task alone fails (ECONNRESET); the other connection is served").toEqual([
          "ECONNRESET",
          "ok",
        ]);
        yield* close(server);
      });
    });

    it.skipIf(!suite.systemSockets)("broken pipe fails the writing task only", async () => {
      await suite.leakFree(function* () {
        // a plain Node server that closes every connection at once
        const rude = net.createServer((c) => c.destroy());
        const port = yield* B.promise(
          () => new Promise<number>((resolve) => rude.listen(0, LO4, () => resolve((rude.address() as net.AddressInfo).port))),
        );
        try {
          const writer = B.spawn(function* () {
            const sock = tcpv4();
            try {
              yield* connect(sock, { host: LO4, port });
              for (let i = 0; i < 1000; i++) {
                yield* write(sock, pattern(i, 1024));
                yield* sleep(0.002);
              }
            } finally {
              yield* close(sock);
            }
          });
          const bystander = B.spawn(function* () {
            yield* sleep(0.05);
            return "still here";
          });
          const error = errorOf(yield* B.awaitTask(writer));
          expect(["EPIPE", "ECONNRESET"], "writing to a peer that is gone fails that task with EPIPE or ECONNRESET").toContain(error.code);
          expect(yield* B.awaitExn(bystander), "another task of the run goes on").toBe("still here");
        } finally {
          // (a net.Server's "close" comes before its handle is gone: give the loop two turns)
          yield* B.promise(() => new Promise<void>((resolve) => rude.close(() => setImmediate(() => setImmediate(resolve)))));
        }
      });
    });

    it("misuse gives typed errors in the task, and the run goes on", async () => {
      await suite.leakFree(function* () {
        const udp = udpv4();
        const buf = Buffer.alloc(16);
        expect(thrown(() => read(udp, buf))).toBeInstanceOf(TypeError);
        expect(thrown(() => write(udp, buf))).toBeInstanceOf(TypeError);
        expect(thrown(() => accept(udp))).toBeInstanceOf(TypeError);
        expect(thrown(() => connect(udp, { host: LO4, port: 1 }))).toBeInstanceOf(TypeError);
        expect(thrown(() => recvfrom(udp, buf))).toBeInstanceOf(TypeError); // not bound yet
        const tcp = tcpv4();
        expect(thrown(() => recvfrom(tcp, buf))).toBeInstanceOf(TypeError);
        expect(thrown(() => sendto(tcp, buf, { host: LO4, port: 9 }))).toBeInstanceOf(TypeError);
        expect(thrown(() => read(tcp, buf))).toBeInstanceOf(TypeError); // not connected
        expect(thrown(() => accept(tcp))).toBeInstanceOf(TypeError); // not listening
        expect(thrown(() => bindAndListen(tcp, { path: "/tmp/x" } as unknown as Address))).toBeInstanceOf(TypeError);
        expect(thrown(() => bindAndListen(tcp, { host: LO4, port: 70000 }))).toBeInstanceOf(RangeError);
        expect((thrown(() => connect(tcp, { host: LO6, port: 80 })) as NodeJS.ErrnoException).code).toBe("EAFNOSUPPORT");
        expect(thrown(() => sleep(-1))).toBeInstanceOf(RangeError);
        expect(thrown(() => read(undefined as unknown as Socket, buf))).toBeInstanceOf(TypeError);

        const server = tcpv4();
        yield* bindAndListen(server, { host: LO4, port: 0 });
        expect(thrown(() => bindAndListen(server, { host: LO4, port: 0 }))).toBeInstanceOf(TypeError);
        expect(thrown(() => connect(server, { host: LO4, port: 1 }))).toBeInstanceOf(TypeError);
        const { port } = getsockname(server) as InetAddress;
        const srv = B.spawn(echoServer, server, 1);
        const sock = tcpv4();
        yield* connect(sock, { host: LO4, port });
        expect((thrown(() => connect(sock, { host: LO4, port })) as NodeJS.ErrnoException).code).toBe("EISCONN");
        expect(thrown(() => read(sock, buf, -1))).toBeInstanceOf(RangeError);
        expect(thrown(() => read(sock, buf, 0, -5))).toBeInstanceOf(RangeError);
        expect(thrown(() => write(sock, buf, 10, 10))).toBeInstanceOf(RangeError);
        expect(thrown(() => read(sock, buf, 1.5))).toBeInstanceOf(RangeError);
        expect(thrown(() => read(sock, "text" as unknown as Buffer))).toBeInstanceOf(TypeError);
        expect(yield* read(sock, buf, 0, 0)).toBe(0);
        yield* roundTrip(sock, pattern(1, 16));
        yield* close(sock);
        expect(thrown(() => write(sock, buf))).toBeInstanceOf(SocketClosed);
        expect(thrown(() => read(sock, buf))).toBeInstanceOf(SocketClosed);
        yield* close(sock); // closing twice is fine
        yield* B.awaitExn(srv);
        yield* close(server);
        yield* close(tcp);
        yield* close(udp);
      });
    });
  });
}
