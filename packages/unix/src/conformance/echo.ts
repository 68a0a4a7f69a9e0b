/** Echo over every kind of socket, and under load: every byte checked. */

import { join } from "node:path";
import * as B from "@bobbin/core";
import {
  accept,
  bindAndListen,
  close,
  connect,
  getsockname,
  type InetAddress,
  read,
  readExactly,
  recvfrom,
  sendto,
  shutdown,
  tcpv4,
  tcpv6,
  udpv4,
  udpv6,
  unixSocket,
  withTimeout,
  write,
} from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { echoServer, hasIpv6Loopback, LO4, LO6, loopbackListener, pattern, roundTrip } from "./support.js";

/** @internal */
export function echoTests(suite: Suite): void {
  describe("echo", () => {
    it("TCP/IPv4: an echo server and a client that checks every byte", async () => {
      const total = await suite.leakFree(function* () {
        const server = tcpv4();
        yield* bindAndListen(server, { host: LO4, port: 0 });
        const addr = getsockname(server) as InetAddress;
        expect(addr.host, "getsockname after bindAndListen: the address it was bound to").toBe(LO4);
        expect(addr.port, "port 0 binds a port the system chose, and getsockname tells it").toBeGreaterThan(0);
        const srv = B.spawn(echoServer, server, 1);
        const sock = tcpv4();
        yield* connect(sock, { host: LO4, port: addr.port });
        expect(sock.state, 'connect returns once the socket is connected (state "connected")').toBe("connected");
        for (let i = 1; i <= 20; i++) yield* roundTrip(sock, pattern(i, i * 997));
        yield* close(sock);
        expect(sock.state, 'close makes the socket "closed" at once').toBe("closed");
        const echoed = yield* B.awaitExn(srv);
        yield* close(server);
        return echoed;
      });
      expect(total, "the server echoed every byte the client wrote, no more").toBe(
        Array.from({ length: 20 }, (_, i) => (i + 1) * 997).reduce((a, b) => a + b),
      );
    });

    it.skipIf(!hasIpv6Loopback())("TCP/IPv6 echo on ::1", async () => {
      await suite.leakFree(function* () {
        const server = tcpv6();
        yield* bindAndListen(server, { host: LO6, port: 0 });
        const { port } = getsockname(server) as InetAddress;
        const srv = B.spawn(echoServer, server, 1);
        const sock = tcpv6();
        yield* connect(sock, { host: LO6, port });
        yield* roundTrip(sock, pattern(6, 100_000));
        yield* close(sock);
        yield* B.awaitExn(srv);
        yield* close(server);
      });
    });

    it("Unix-socket echo in a temporary directory", async () => {
      const path = join(suite.dir(), "echo.sock");
      await suite.leakFree(function* () {
        const server = unixSocket();
        yield* bindAndListen(server, { path });
        expect(getsockname(server), "a Unix listener's getsockname is its path").toEqual({ path });
        const srv = B.spawn(echoServer, server, 2);
        for (let c = 0; c < 2; c++) {
          const sock = unixSocket();
          yield* connect(sock, { path });
          yield* roundTrip(sock, pattern(c, 50_000));
          yield* close(sock);
        }
        yield* B.awaitExn(srv);
        yield* close(server);
      });
    });

    it("UDP/IPv4 echo: recvfrom tells the sender, sendto answers it", async () => {
      await suite.leakFree(function* () {
        const server = udpv4();
        yield* bindAndListen(server, { host: LO4, port: 0 });
        expect(server.state, 'bindAndListen of a UDP socket leaves it "bound"').toBe("bound");
        const { port } = getsockname(server) as InetAddress;
        const srv = B.spawn(function* () {
          const buf = Buffer.alloc(2048);
          for (let i = 0; i < 10; i++) {
            const [n, from] = yield* recvfrom(server, buf);
            yield* sendto(server, buf, 0, n, from);
          }
        });
        const sock = udpv4();
        const back = Buffer.alloc(2048);
        for (let i = 0; i < 10; i++) {
          const msg = pattern(i, 100 + i * 100);
          expect(yield* sendto(sock, msg, { host: LO4, port }), "sendto returns the datagram's size").toBe(msg.length);
          const [n, from] = yield* withTimeout(5, recvfrom(sock, back));
          expect(from, "recvfrom tells who sent the datagram (the server's address)").toEqual({ host: LO4, port });
          expect(back.subarray(0, n).equals(msg), "the datagram comes back byte for byte").toBe(true);
        }
        yield* B.awaitExn(srv);
        yield* close(sock);
        yield* close(server);
      });
    });

    it.skipIf(!hasIpv6Loopback())("UDP/IPv6 echo on ::1, datagrams truncated to the buffer", async () => {
      await suite.leakFree(function* () {
        const server = udpv6();
        yield* bindAndListen(server, { host: LO6, port: 0 });
        const { port } = getsockname(server) as InetAddress;
        const sock = udpv6();
        yield* sendto(sock, pattern(1, 600), { host: LO6, port });
        const small = Buffer.alloc(100);
        const [n, from] = yield* withTimeout(5, recvfrom(server, small));
        expect(n, "recvfrom into a smaller buffer returns the buffer's size (the datagram is truncated)").toBe(100);
        expect(small.equals(pattern(1, 600).subarray(0, 100)), "a truncated datagram keeps its first bytes").toBe(true);
        yield* sendto(server, Buffer.from("pong"), from);
        const [m] = yield* withTimeout(5, recvfrom(sock, small));
        expect(small.subarray(0, m).toString(), "sendto to the address recvfrom gave reaches the sender").toBe("pong");
        yield* close(sock);
        yield* close(server);
      });
    });

    it("1,000 concurrent clients, each verifying every byte", async () => {
      const CLIENTS = 1000;
      const SIZE = 2048;
      const started = performance.now();
      const echoed = await suite.leakFree(function* () {
        const [server, port] = yield* loopbackListener({ backlog: 1024 });
        const srv = B.spawn(echoServer, server, CLIENTS);
        const clients: B.Task<void>[] = [];
        for (let c = 0; c < CLIENTS; c++) {
          clients.push(
            B.spawn(function* () {
              const sock = tcpv4();
              try {
                yield* connect(sock, { host: LO4, port });
                const data = pattern(c + 1, SIZE);
                // in two writes, so servers see partial messages too
                yield* write(sock, data, 0, SIZE / 2);
                yield* write(sock, data, SIZE / 2);
                const back = Buffer.alloc(SIZE);
                yield* readExactly(sock, back);
                if (!back.equals(data)) throw new Error(`client ${c}: echoed bytes differ`);
              } finally {
                yield* close(sock);
              }
            }),
          );
        }
        for (const r of yield* B.awaitAll(clients)) if (!r.ok) throw r.error;
        const total = yield* B.awaitExn(srv);
        yield* close(server);
        return total;
      });
      expect(echoed, "every byte of every client came back").toBe(CLIENTS * SIZE);
      expect(
        performance.now() - started,
        "1,000 clients of 8 KiB each take seconds, not more: a backend must not serialise or stall connections",
      ).toBeLessThan(15_000);
    });

    it("a write larger than the socket buffers completes, and the reader gets every byte", async () => {
      await suite.leakFree(function* () {
        const [server, port] = yield* loopbackListener();
        const data = pattern(42, 8 * 1024 * 1024);
        const reader = B.spawn(function* () {
          const [client] = yield* accept(server);
          const back = Buffer.alloc(data.length);
          yield* readExactly(client, back);
          expect(yield* read(client, Buffer.alloc(1)), "the peer closed after the big write: read returns 0 at the end of the stream").toBe(
            0,
          );
          yield* close(client);
          return back.equals(data);
        });
        const sock = tcpv4();
        yield* connect(sock, { host: LO4, port });
        yield* write(sock, data);
        shutdown(sock, "send");
        expect(
          yield* B.awaitExn(reader),
          "the reader got every byte of a write larger than the socket buffers: write returns only once all are handed over",
        ).toBe(true);
        yield* close(sock);
        yield* close(server);
      });
    });
  });
}
