// The native backend's queued writes: small writes are staged in the
// poller's send queue and submitted together with the next call into the
// addon; what the kernel does not take goes first once the socket is
// writable again (src/epoll/ops.ts WriteOp, src/epoll/backend.ts).
import * as B from "@bobbin/core";
import { close, read, type Socket, shutdown, sleep, write } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { pair, runNative } from "../helpers.js";

/** Reads `sock` to the end of the stream. */
function* readToEnd(sock: Socket, pause = 0): Generator<B.Instruction, Buffer, unknown> {
  if (pause > 0) yield* sleep(pause);
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(1 << 16);
  for (let n: number; (n = yield* read(sock, buf)) > 0; ) chunks.push(Buffer.from(buf.subarray(0, n)));
  return Buffer.concat(chunks);
}

/** `count` numbered chunks of `size` bytes: chunk i is its number, repeated. */
function numbered(count: number, size: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => Buffer.alloc(size, `${i};`));
}

describe("native backend: queued writes", () => {
  it("the writes of a slice are sent together, in order", async () => {
    const got = await runNative(function* (backend) {
      const [server, conn, client] = yield* pair();
      const chunks = numbered(200, 10);
      const sendsBefore = backend.stats.sends;
      const reader = B.spawn(readToEnd, client);
      for (const c of chunks) yield* write(conn, c); // none of them parks
      yield* close(conn); // submits what is queued
      const sends = backend.stats.sends - sendsBefore;
      const received = yield* B.awaitExn(reader);
      for (const s of [client, server]) yield* close(s);
      return { same: received.equals(Buffer.concat(chunks)), sends };
    });
    expect(got.same).toBe(true);
    expect(got.sends).toBe(200);
  });

  it("a write too large to queue goes after the socket's queued ones", async () => {
    const same = await runNative(function* () {
      const [server, conn, client] = yield* pair();
      const small = Buffer.from("first;");
      const large = Buffer.alloc(64 * 1024, "large;"); // sent directly
      const reader = B.spawn(readToEnd, client);
      yield* write(conn, small);
      yield* write(conn, large);
      yield* close(conn);
      const received = yield* B.awaitExn(reader);
      for (const s of [client, server]) yield* close(s);
      return received.equals(Buffer.concat([small, large]));
    });
    expect(same).toBe(true);
  });

  it("what a queued send leaves unsent goes first, in order, while later writes wait behind it", async () => {
    const got = await runNative(function* () {
      const [server, conn, client] = yield* pair();
      // 16 MiB in 4 KiB writes: far more than the socket buffers hold, so
      // queued sends come back short while the reader sleeps.
      const chunks = numbered(4096, 4096);
      const reader = B.spawn(readToEnd, client, 0.05);
      for (const c of chunks) yield* write(conn, c);
      yield* close(conn);
      const received = yield* B.awaitExn(reader);
      for (const s of [client, server]) yield* close(s);
      return { length: received.length, same: received.equals(Buffer.concat(chunks)) };
    });
    expect(got.length).toBe(4096 * 4096);
    expect(got.same).toBe(true);
  });

  it("close waits for the bytes of writes that returned", async () => {
    const got = await runNative(function* () {
      const [server, conn, client] = yield* pair();
      const chunks = numbered(1024, 4096);
      const reader = B.spawn(readToEnd, client, 0.05);
      const writer = B.spawn(function* () {
        for (const c of chunks) yield* write(conn, c);
        yield* close(conn); // right after the last write returned
      });
      yield* B.awaitExn(writer);
      const received = yield* B.awaitExn(reader);
      for (const s of [client, server]) yield* close(s);
      return received.equals(Buffer.concat(chunks));
    });
    expect(got).toBe(true);
  });

  it("shutdown for sending waits for them too: the peer reads every byte, then the end of the stream", async () => {
    const got = await runNative(function* () {
      const [server, conn, client] = yield* pair();
      const chunks = numbered(1024, 4096);
      const reader = B.spawn(readToEnd, client, 0.05);
      for (const c of chunks) yield* write(conn, c);
      shutdown(conn, "send");
      const received = yield* B.awaitExn(reader);
      for (const s of [client, conn, server]) yield* close(s);
      return received.equals(Buffer.concat(chunks));
    });
    expect(got).toBe(true);
  });

  it("an error of a queued send is thrown by a later write", async () => {
    const error = await runNative(function* () {
      const [server, conn, client] = yield* pair();
      yield* close(client);
      yield* sleep(0.01);
      let caught: unknown = null;
      for (let i = 0; i < 100 && caught === null; i++) {
        try {
          yield* write(conn, "are you there?");
          yield* sleep(0.001); // the run queue empties: the queued send goes
        } catch (e) {
          caught = e;
        }
      }
      for (const s of [conn, server]) yield* close(s);
      return caught as NodeJS.ErrnoException | null;
    });
    expect(["EPIPE", "ECONNRESET"]).toContain(error?.code);
  });
});
