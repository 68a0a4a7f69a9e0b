// What the io_uring backend does beyond the conformance suite, at its entry points
// (src/uring/backend.ts): options, task-run modes, its ring's lifetime, closing, and
// failures in the addon's pump. Streams and listeners: stream.test.ts, listener.test.ts.
import * as net from "node:net";
import * as B from "@bobbin/core";
import { noProcFds, openFdsOf, procFds } from "@bobbin/test-support";
import {
  accept,
  bindAndListen,
  close,
  getsockname,
  read,
  readExactly,
  run,
  SocketClosed,
  shutdown,
  sleep,
  tcpv4,
  write,
} from "@bobbin/unix";
import { connectedPair } from "@bobbin/unix/conformance";
import { describe, expect, it } from "vitest";
import { uringBackend, uringSupport } from "../../src/index.js";
import { IoUringBackend } from "../../src/uring/backend.js";
import type { UringSocket } from "../../src/uring/socket.js";
import { noUring, uring } from "../helpers.js";

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
    let during: (number | null)[] = [];
    await run(
      function* () {
        const [client, conn, server] = yield* connectedPair();
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
          const [client, conn, server] = yield* connectedPair();
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

  it("closing wakes the waiters with SocketClosed, and a closed socket's fd goes once its requests ended", async () => {
    let backend!: IoUringBackend;
    const out = await run(
      function* () {
        const [client, conn, server] = yield* connectedPair();
        const reader = B.spawn(function* () {
          yield* read(conn, Buffer.alloc(8));
        });
        yield* sleep(0.01);
        yield* close(conn);
        const r = yield* B.awaitTask(reader);
        const live = backend.io.fds.live.has(conn as UringSocket);
        for (const s of [client, server]) yield* close(s);
        return { error: r.ok ? null : r.error, live, remaining: backend.io.fds.live.size };
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
