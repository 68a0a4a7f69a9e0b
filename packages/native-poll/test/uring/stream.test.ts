// A connected stream of the io_uring backend (src/uring/stream.ts): read-ahead into provided
// buffers and its cap, buffers and staging slots running out, sends in flight behind a
// returned write, and closing after them.
import * as net from "node:net";
import * as B from "@bobbin/core";
import {
  accept,
  bindAndListen,
  close,
  connect,
  getsockname,
  read,
  readChunk,
  readExactly,
  run,
  type Socket,
  sleep,
  Timeout,
  tcpv4,
  withTimeout,
  write,
} from "@bobbin/unix";
import { connectedPair } from "@bobbin/unix/conformance";
import { describe, expect, it } from "vitest";
import { uringBackend } from "../../src/index.js";
import { IoUringBackend } from "../../src/uring/backend.js";
import type { UringSocket } from "../../src/uring/socket.js";
import { armRecv, noUring, pattern, readToEnd, uring } from "../helpers.js";

describe.skipIf(!uring.available)(`io_uring backend: a connected stream${noUring}`, () => {
  it("stops reading ahead past readAhead bytes, and goes on as read catches up", async () => {
    const data = pattern(1, 512 * 1024);
    let backend!: IoUringBackend;
    const got = await run(
      function* () {
        const [client, conn, server] = yield* connectedPair();
        yield* armRecv(conn);
        const writer = B.spawn(function* () {
          yield* write(client, data);
          yield* close(client);
        });
        yield* sleep(0.1); // the peer writes what the kernel takes; nothing is read here
        const s = conn as UringSocket;
        expect(s.queued).toBeGreaterThan(0);
        // A multishot recv fills up to 32 buffers per run of completion work before the cancel lands.
        expect(s.queued).toBeLessThanOrEqual(backend.io.readAhead + 32 * 1024);
        const all = yield* readToEnd(conn);
        yield* B.awaitExn(writer);
        yield* close(conn);
        yield* close(server);
        return all;
      },
      { backend: () => (backend = new IoUringBackend({ bufferSize: 1024, readAhead: 8192 })) },
    );
    expect(got.equals(data)).toBe(true);
  });

  it("a recv starved of provided buffers goes on once buffers come back", async () => {
    const got = await run(
      function* () {
        const server = tcpv4();
        yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
        const pairs: [Socket, Socket][] = [];
        for (let i = 0; i < 3; i++) {
          const client = tcpv4();
          yield* connect(client, getsockname(server));
          const [conn] = yield* accept(server);
          pairs.push([conn, client]);
        }
        for (const [conn] of pairs) yield* armRecv(conn);
        // 3 × 1000 bytes, 64-byte buffers, 4 of them: the recvs run out of buffers.
        for (const [i, [, client]] of pairs.entries()) yield* write(client, pattern(i, 1000));
        yield* sleep(0.05);
        const out: boolean[] = [];
        for (const [i, [conn, client]] of pairs.entries()) {
          const back = Buffer.alloc(1000);
          yield* withTimeout(5, readExactly(conn, back));
          out.push(back.equals(pattern(i, 1000)));
          yield* close(client);
          yield* close(conn);
        }
        yield* close(server);
        return out;
      },
      { backend: () => uringBackend({ buffers: 4, bufferSize: 64, readAhead: 1 << 20 }) },
    );
    expect(got).toEqual([true, true, true]);
  });

  it("readChunk lends provided buffers: each goes back to the ring at release, the next readChunk or the close", async () => {
    const got = await run(
      function* () {
        const [conn, client, server] = yield* connectedPair();
        yield* close(server);
        const ring = (conn.backend as IoUringBackend).io.ring;
        const data = pattern(3, 10_000);
        const writer = B.spawn(function* () {
          yield* write(client, data);
        });
        // 4 buffers of 64 bytes for 10,000 bytes: the recv goes on only if every lent buffer comes back.
        const parts: Buffer[] = [];
        let held = 0;
        while (held < data.length) {
          const chunk = (yield* withTimeout(5, readChunk(conn)))!;
          parts.push(Buffer.from(chunk.bytes));
          held += chunk.length;
          if (parts.length % 3 === 0) chunk.release(); // the others go back at the next readChunk
        }
        yield* B.awaitExn(writer);
        yield* write(client, "last");
        const last = (yield* withTimeout(5, readChunk(conn)))!;
        expect(Buffer.from(last.bytes).toString()).toBe("last");
        yield* close(conn); // takes the last chunk back
        yield* sleep(0.02);
        const inRing = ring.buffersInRing;
        yield* close(client);
        return [Buffer.concat(parts).equals(data), inRing];
      },
      { backend: () => uringBackend({ buffers: 4, bufferSize: 64, readAhead: 1 << 20 }) },
    );
    expect(got, "every byte, and every buffer back in the ring after the close").toEqual([true, 4]);
  });

  it("a write returns while its send is in flight; that send's error is thrown by the next write", async () => {
    // A plain Node server that resets each connection once it has heard from it.
    const rude = net.createServer((c) => c.once("data", () => c.resetAndDestroy()));
    const port = await new Promise<number>((resolve) =>
      rude.listen(0, "127.0.0.1", () => resolve((rude.address() as net.AddressInfo).port)),
    );
    try {
      const codes = await run(
        function* () {
          const sock = tcpv4();
          yield* connect(sock, { host: "127.0.0.1", port });
          yield* write(sock, "request");
          const seen: string[] = [];
          try {
            yield* withTimeout(5, read(sock, Buffer.alloc(16))); // the reset has arrived once this fails
          } catch (e) {
            seen.push((e as NodeJS.ErrnoException).code ?? String(e));
          }
          yield* write(sock, "one"); // returns: its send is on its way, and fails
          try {
            yield* write(sock, "two");
            seen.push("no error");
          } catch (e) {
            seen.push((e as NodeJS.ErrnoException).code ?? String(e));
          }
          yield* close(sock);
          return seen;
        },
        { backend: uringBackend },
      );
      expect(codes[0]).toBe("ECONNRESET");
      expect(["EPIPE", "ECONNRESET"]).toContain(codes[1]);
    } finally {
      await new Promise<void>((resolve) => rude.close(() => resolve()));
    }
  });

  it("close waits for the send in flight: a slow peer gets every byte, then the end of the stream", async () => {
    const data = pattern(2, 4 * 1024 * 1024);
    const got = await run(
      function* () {
        const [client, conn, server] = yield* connectedPair();
        const reader = B.spawn(function* () {
          yield* sleep(0.1); // the writer is done and closing by now
          return yield* readToEnd(conn);
        });
        yield* write(client, data);
        yield* close(client);
        const all = yield* B.awaitExn(reader);
        yield* close(conn);
        yield* close(server);
        return all;
      },
      { backend: uringBackend },
    );
    expect(got.length).toBe(data.length);
    expect(got.equals(data)).toBe(true);
  });

  it("a close given up (timeout) cancels the send in flight and lets the fd go", async () => {
    let backend!: IoUringBackend;
    const out = await run(
      function* () {
        const [client, conn, server] = yield* connectedPair();
        // Small writes return while their send is in flight; the peer never reads,
        // so one of them stays in flight and the next one waits.
        const chunk = Buffer.alloc(16384, 1);
        for (;;) {
          try {
            yield* withTimeout(0.05, write(client, chunk));
          } catch (e) {
            if (e instanceof Timeout) break;
            throw e;
          }
        }
        const s = client as UringSocket;
        const stuck = s.sending;
        let timedOut = false;
        try {
          yield* withTimeout(0.05, close(client));
        } catch (e) {
          timedOut = e instanceof Timeout;
        }
        for (let i = 0; i < 100 && s.fd >= 0; i++) yield* sleep(0.01);
        const state = { stuck, timedOut, closed: client.state, fd: s.fd, live: backend.io.fds.live.has(s) };
        yield* close(conn);
        yield* close(server);
        return state;
      },
      { backend: () => (backend = new IoUringBackend()) },
    );
    expect(out).toEqual({ stuck: true, timedOut: true, closed: "closed", fd: -1, live: false });
  });

  it("a write waits for a staging slot while every slot is in flight", async () => {
    const data = pattern(3, 200_000);
    const got = await run(
      function* () {
        const server = tcpv4();
        yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
        const [a, b] = [tcpv4(), tcpv4()];
        yield* connect(a, getsockname(server));
        const [peerA] = yield* accept(server);
        yield* connect(b, getsockname(server));
        const [peerB] = yield* accept(server);
        // Both write more than the kernel holds; with one staging slot they take turns.
        const writers = [a, b].map((s) =>
          B.spawn(function* () {
            yield* write(s, data);
            yield* close(s);
          }),
        );
        const readers = [peerA, peerB].map((s) => B.spawn(readToEnd, s));
        const all = yield* B.awaitAll(readers);
        for (const r of yield* B.awaitAll(writers)) if (!r.ok) throw r.error;
        for (const s of [peerA, peerB, server]) yield* close(s);
        return all.map((r) => (r.ok ? r.value.equals(data) : r.error));
      },
      { backend: () => uringBackend({ staging: 1, stagingSize: 4096 }) },
    );
    expect(got).toEqual([true, true]);
  });
});
