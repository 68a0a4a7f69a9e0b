// What the io_uring backend does beyond the conformance suite: read-ahead and
// its cap, buffers and staging slots running out, sends in flight behind a
// returned write, closing after them, task-run modes, its ring's lifetime.
import * as net from "node:net";
import * as B from "@bobbin/core";
import {
  accept,
  bindAndListen,
  close,
  connect,
  getsockname,
  read,
  readExactly,
  run,
  type Socket,
  SocketClosed,
  shutdown,
  sleep,
  Timeout,
  tcpv4,
  withTimeout,
  write,
} from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { uringBackend, uringSupport } from "../../src/index.js";
import { IoUringBackend } from "../../src/uring/backend.js";
import type { UringSocket } from "../../src/uring/socket.js";
import { noProcFds, noUring, openFdsOf, pair, procFds, uring } from "../helpers.js";

function pattern(seed: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) buf[i] = (seed * 131 + i * 7 + (i >> 8)) & 0xff;
  return buf;
}

/** A read that finds nothing and times out: it leaves the socket's multishot recv armed. */
function* armRecv(sock: Socket): Generator<B.Instruction, void, unknown> {
  try {
    yield* withTimeout(0.01, read(sock, Buffer.alloc(1)));
    throw new Error("armRecv: the socket had data");
  } catch (e) {
    if (!(e instanceof Timeout)) throw e;
  }
}

/** Reads until the end of the stream; returns everything. */
function* readAll(sock: Socket): Generator<B.Instruction, Buffer, unknown> {
  const parts: Buffer[] = [];
  const buf = Buffer.alloc(65536);
  for (let n: number; (n = yield* read(sock, buf)) > 0; ) parts.push(Buffer.from(buf.subarray(0, n)));
  return Buffer.concat(parts);
}

describe.skipIf(!uring.available)(`io_uring backend${noUring}`, () => {
  it("is made by uringBackend() and named; bad options are RangeErrors", async () => {
    const b = uringBackend();
    expect(b).toBeInstanceOf(IoUringBackend);
    expect(b.name).toBe("uring");
    const asFactory = uringBackend(0); // called as run's factory with the domain
    expect(asFactory).toBeInstanceOf(IoUringBackend);
    expect(() => uringBackend({ buffers: 3 })).toThrow(RangeError);
    expect(() => uringBackend({ bufferSize: 0 })).toThrow(RangeError);
    expect(() => uringBackend({ taskRun: "never" as "auto" })).toThrow(/"auto", "defer", "coop" or "signal"/);
    await Promise.all([b.drain(), asFactory.drain()]);
  });

  it.skipIf(!procFds)(`closes its ring and eventfd when the run is over${noProcFds}`, async () => {
    const before = [openFdsOf("io_uring"), openFdsOf("eventfd")];
    let during: number[] = [];
    await run(
      function* () {
        const [server, conn, client] = yield* pair();
        yield* write(client, "x");
        expect(yield* read(conn, Buffer.alloc(4))).toBe(1);
        during = [openFdsOf("io_uring"), openFdsOf("eventfd")];
        void server; // left open: the end of the run closes them
      },
      { backend: uringBackend },
    );
    expect(during).toEqual([before[0]! + 1, before[1]! + 1]);
    expect([openFdsOf("io_uring"), openFdsOf("eventfd")]).toEqual(before);
  });

  for (const taskRun of ["defer", "coop", "signal"] as const) {
    it(`echoes with task-run mode "${taskRun}"`, async () => {
      let backend!: IoUringBackend;
      const echoed = await run(
        function* () {
          const [server, conn, client] = yield* pair();
          const echo = B.spawn(function* () {
            const buf = Buffer.alloc(100);
            for (let n: number; (n = yield* read(conn, buf)) > 0; ) yield* write(conn, buf, 0, n);
          });
          const back = Buffer.alloc(5);
          for (const word of ["hello", "world"]) {
            yield* write(client, word);
            yield* readExactly(client, back);
            expect(back.toString()).toBe(word);
          }
          shutdown(client, "send");
          yield* B.awaitExn(echo);
          for (const s of [client, conn, server]) yield* close(s);
          return 10;
        },
        { backend: () => (backend = new IoUringBackend({ taskRun })) },
      );
      expect(echoed).toBe(10);
      const c = backend.io.ring.constants;
      const defer = (backend.io.ring.setupFlags & c.SETUP_DEFER_TASKRUN) !== 0;
      const coop = (backend.io.ring.setupFlags & c.SETUP_COOP_TASKRUN) !== 0;
      expect([defer, coop]).toEqual([taskRun === "defer", taskRun === "coop"]);
    });
  }

  it("stops reading ahead past readAhead bytes, and goes on as read catches up", async () => {
    const data = pattern(1, 512 * 1024);
    let backend!: IoUringBackend;
    const got = await run(
      function* () {
        const [server, conn, client] = yield* pair();
        yield* armRecv(conn);
        const writer = B.spawn(function* () {
          yield* write(client, data);
          yield* close(client);
        });
        yield* sleep(0.1); // the peer writes what the kernel takes; nothing is read here
        const s = conn as UringSocket;
        expect(s.input!.queued).toBeGreaterThan(0);
        // A multishot recv fills up to 32 buffers per run of completion work before the cancel lands.
        expect(s.input!.queued).toBeLessThanOrEqual(backend.io.readAhead + 32 * 1024);
        const all = yield* readAll(conn);
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
        const [server, conn, client] = yield* pair();
        const reader = B.spawn(function* () {
          yield* sleep(0.1); // the writer is done and closing by now
          return yield* readAll(conn);
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
        const [server, conn, client] = yield* pair();
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
        const state = { stuck, timedOut, closed: client.state, fd: s.fd, live: backend.io.live.has(s) };
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
        const readers = [peerA, peerB].map((s) => B.spawn(readAll, s));
        const all = yield* B.awaitAll(readers);
        for (const r of yield* B.awaitAll(writers)) if (!r.ok) throw r.error;
        for (const s of [peerA, peerB, server]) yield* close(s);
        return all.map((r) => (r.ok ? r.value.equals(data) : r.error));
      },
      { backend: () => uringBackend({ staging: 1, stagingSize: 4096 }) },
    );
    expect(got).toEqual([true, true]);
  });

  it("a listener accepts a few connections ahead of accept, no more", async () => {
    const out = await run(
      function* () {
        const server = tcpv4();
        yield* bindAndListen(server, { host: "127.0.0.1", port: 0 }, { backlog: 128 });
        const clients: Socket[] = [];
        const first = B.spawn(function* () {
          return yield* accept(server); // arms the multishot accept
        });
        for (let i = 0; i < 40; i++) {
          const c = tcpv4();
          yield* connect(c, getsockname(server));
          clients.push(c);
        }
        yield* sleep(0.05);
        const [conn] = yield* B.awaitExn(first);
        const ahead = (server as UringSocket).accepted.length;
        const conns = [conn];
        for (let i = 1; i < 40; i++) conns.push((yield* withTimeout(5, accept(server)))[0]);
        for (const s of [...clients, ...conns, server]) yield* close(s);
        return { ahead, accepted: conns.length };
      },
      { backend: uringBackend },
    );
    expect(out.ahead).toBeGreaterThan(0);
    expect(out.ahead).toBeLessThanOrEqual(16 + 4); // the cancel meets a few more on its way
    expect(out.accepted).toBe(40);
  });

  it("once shared with other domains, a listener takes one connection per waiting accept", async () => {
    const out = await run(
      function* () {
        const server = tcpv4();
        yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
        const first = B.spawn(function* () {
          return yield* accept(server); // a multishot accept, cancelled by share below
        });
        yield* sleep(0.01);
        (server.backend as IoUringBackend).share(server);
        yield* sleep(0.01); // the cancellation reaches the kernel
        const clients: Socket[] = [];
        for (let i = 0; i < 10; i++) {
          const c = tcpv4();
          yield* connect(c, getsockname(server));
          clients.push(c);
        }
        const [conn] = yield* B.awaitExn(first);
        yield* sleep(0.05);
        const ahead = (server as UringSocket).accepted.length;
        const conns = [conn];
        for (let i = 1; i < 10; i++) conns.push((yield* withTimeout(5, accept(server)))[0]);
        for (const s of [...clients, ...conns, server]) yield* close(s);
        return { ahead, accepted: conns.length };
      },
      { backend: uringBackend },
    );
    expect(out).toEqual({ ahead: 0, accepted: 10 });
  });

  it("closing wakes the waiters with SocketClosed, and a closed socket's fd goes once its requests ended", async () => {
    let backend!: IoUringBackend;
    const out = await run(
      function* () {
        const [server, conn, client] = yield* pair();
        const reader = B.spawn(function* () {
          yield* read(conn, Buffer.alloc(8));
        });
        yield* sleep(0.01);
        yield* close(conn);
        const r = yield* B.awaitTask(reader);
        const live = backend.io.live.has(conn as UringSocket);
        for (const s of [client, server]) yield* close(s);
        return { error: r.ok ? null : r.error, live, remaining: backend.io.live.size };
      },
      { backend: () => (backend = new IoUringBackend()) },
    );
    expect(out.error).toBeInstanceOf(SocketClosed);
    expect(out.live).toBe(false);
    expect(out.remaining).toBe(0);
  });

  it("uringSupport names the setup flags rings get here", () => {
    const s = uringSupport();
    expect(s).toMatchObject({ available: true, reason: "" });
    expect(s.setup.includes("DEFER_TASKRUN") || s.setup.includes("COOP_TASKRUN")).toBe(true);
  });
});

describe.skipIf(!uring.available)(`io_uring backend: failures in the addon's pump${noUring}`, () => {
  it("an io_uring_enter that fails in Node's callback fails the run with an error naming it, instead of being ignored", async () => {
    let backend: IoUringBackend | undefined;
    let peer: net.Socket | undefined;
    const outcome = run(
      function* () {
        const server = tcpv4();
        yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
        peer = net.connect((getsockname(server) as { port: number }).port, "127.0.0.1").on("error", () => {}); // reset when the run ends
        const [sock] = yield* accept(server);
        const reader = B.spawn(function* () {
          yield* read(sock, Buffer.alloc(16));
        });
        yield* sleep(0.01); // the reader's recv is armed and parked
        // JavaScript's SQ tail, in the memory it shares with the addon, made
        // wrong: the pump's next entry is refused (EINVAL). select does not
        // enter the ring itself (eagerPoll: false): the bytes below wake the pump.
        const control = backend!.io.ring.control;
        control[0] = (control[0]! + 1_000_000) | 0;
        setTimeout(() => peer!.write("wake the pump"), 10);
        yield* B.awaitExn(reader);
      },
      { backend: () => (backend = new IoUringBackend({ eagerPoll: false })) },
    );
    const error = (await outcome.then(
      () => null,
      (e: unknown) => e,
    )) as Error & { cause?: NodeJS.ErrnoException };
    peer?.destroy();
    expect(error).toBeInstanceOf(B.CallbackFailed);
    expect(error.message).toContain("select");
    expect(error.cause).toMatchObject({ code: "EINVAL", syscall: "io_uring_enter" });
    expect(error.cause?.message).toContain("the ring's pump");
  });
});
