// The native backend's connected streams (src/epoll/stream.ts): reads taken with
// the poller's batch — it reads for a parked `read` and hands the bytes over
// before waking it — and queued writes — small writes are staged in the
// poller's send queue and submitted together with the next call into the
// addon; what the kernel does not take goes first once the socket is
// writable again.

import * as B from "@bobbin/core";
import {
  accept,
  close,
  connect,
  getsockname,
  read,
  type Socket,
  SocketClosed,
  shutdown,
  sleep,
  Timeout,
  tcpv4,
  withTimeout,
  write,
} from "@bobbin/unix";
import { connectedPair } from "@bobbin/unix/conformance";
import { describe, expect, it } from "vitest";
import { readToEnd, runNative } from "../helpers.js";

/** The native socket's descriptor number. */
const fdOf = (sock: Socket): number => (sock as unknown as { fd: number }).fd;

/** What a native socket holds of returned writes' bytes that the kernel has not taken yet. */
const unsentOf = (sock: Socket): Uint8Array | null => (sock as unknown as { unsent: Uint8Array | null }).unsent;

describe("native backend: reads taken with the batch", () => {
  it("a parked read gets its bytes from the batch, without a read of its own", async () => {
    const got = await runNative(function* (backend) {
      const [client, conn, server] = yield* connectedPair();
      const buf = Buffer.alloc(64);
      const words: string[] = [];
      const reader = B.spawn(function* () {
        for (let i = 0; i < 3; i++) {
          const n = yield* read(conn, buf);
          words.push(buf.subarray(0, n).toString());
        }
      });
      const before = backend.stats.readsAhead;
      for (const word of ["one", "two", "three"]) {
        yield* B.yieldNow(); // the reader parks
        yield* write(client, word);
        while (words.length === 0 || words.at(-1) !== word) yield* B.yieldNow();
      }
      yield* B.awaitExn(reader);
      const ahead = backend.stats.readsAhead - before;
      for (const s of [client, conn, server]) yield* close(s);
      return { words, ahead };
    });
    expect(got.words).toEqual(["one", "two", "three"]);
    expect(got.ahead).toBe(3);
  });

  it("reads no more than the reader asked for; the rest is the next read's", async () => {
    const got = await runNative(function* () {
      const [client, conn, server] = yield* connectedPair();
      const small = Buffer.alloc(4);
      const first = B.spawn(function* () {
        const n = yield* read(conn, small);
        return small.subarray(0, n).toString();
      });
      yield* B.yieldNow();
      yield* write(client, "abcdefgh");
      const a = yield* B.awaitExn(first);
      const rest = Buffer.alloc(16);
      const n = yield* read(conn, rest);
      for (const s of [client, conn, server]) yield* close(s);
      return [a, rest.subarray(0, n).toString()];
    });
    expect(got).toEqual(["abcd", "efgh"]);
  });

  it("a read cancelled while parked leaves the bytes that come later to the next read", async () => {
    const got = await runNative(function* (backend) {
      const [client, conn, server] = yield* connectedPair();
      const reader = B.spawn(function* () {
        yield* read(conn, Buffer.alloc(64));
      });
      yield* B.yieldNow(); // parked: the poller would read for it
      yield* B.cancel(reader);
      const before = backend.stats.readsAhead;
      yield* write(client, "after");
      yield* sleep(0.02); // a batch reports conn readable while nobody reads it
      const ahead = backend.stats.readsAhead - before;
      const buf = Buffer.alloc(64);
      const n = yield* read(conn, buf);
      for (const s of [client, conn, server]) yield* close(s);
      return { text: buf.subarray(0, n).toString(), ahead };
    });
    expect(got.text).toBe("after");
    expect(got.ahead).toBe(0); // never read for the cancelled reader
  });

  it("a read that timed out leaves the bytes that come later to the next read", async () => {
    const text = await runNative(function* () {
      const [client, conn, server] = yield* connectedPair();
      const buf = Buffer.alloc(64);
      try {
        yield* withTimeout(0.02, read(conn, buf));
        throw new Error("nothing was sent: the read should have timed out");
      } catch (e) {
        if (!(e instanceof Timeout)) throw e;
      }
      yield* write(client, "late");
      yield* sleep(0.02); // a batch reports conn readable while nobody reads it
      const n = yield* read(conn, buf);
      for (const s of [client, conn, server]) yield* close(s);
      return buf.subarray(0, n).toString();
    });
    expect(text).toBe("late");
  });

  it("bytes the batch read for a reader whose task is cancelled as it is woken are not lost", async () => {
    const got = await runNative(function* (backend) {
      const [client1, conn1, s1] = yield* connectedPair();
      const [client2, conn2, s2] = yield* connectedPair();
      const kept: string[] = [];
      // The parent parks on conn2; its child on conn1. Both are woken by one
      // batch, the parent first (conn2's bytes were sent first), and it
      // cancels the child before the child has run.
      const parent = B.spawn(function* () {
        const child = B.spawn(function* () {
          const buf = Buffer.alloc(64);
          const n = yield* read(conn1, buf);
          kept.push(buf.subarray(0, n).toString());
          yield* B.yieldNow();
          kept.push("not reached: cancelled");
        });
        yield* B.yieldNow();
        yield* read(conn2, Buffer.alloc(64));
        yield* B.cancel(child);
        return (yield* B.awaitTask(child)).ok;
      });
      yield* B.yieldNow();
      yield* B.yieldNow();
      const before = backend.stats.readsAhead;
      yield* write(client2, "wake");
      yield* write(client1, "abc");
      const childOk = yield* B.awaitExn(parent);
      const ahead = backend.stats.readsAhead - before;
      // Whatever the child did not keep is still there for the next read.
      let rest = "";
      if (kept.length === 0) {
        const buf = Buffer.alloc(64);
        rest = buf.subarray(0, yield* read(conn1, buf)).toString();
      }
      for (const s of [client1, conn1, s1, client2, conn2, s2]) yield* close(s);
      return { kept, rest, childOk, ahead };
    });
    expect(got.childOk).toBe(false);
    expect(got.ahead).toBe(2); // both bytes came with the batch
    expect(got.kept.join("") + got.rest).toBe("abc");
    expect(got.kept).not.toContain("not reached: cancelled");
  });

  it("closing a socket whose read is parked: the read fails, and nothing is ever read for its fd number again", async () => {
    const got = await runNative(function* (backend) {
      const [client, conn, server] = yield* connectedPair();
      const reader = B.spawn(function* () {
        try {
          yield* read(conn, Buffer.alloc(64));
          return "read";
        } catch (e) {
          return e instanceof SocketClosed ? "SocketClosed" : String(e);
        }
      });
      yield* B.yieldNow(); // parked: the poller would read for it
      const fd = fdOf(conn);
      yield* close(conn);
      const outcome = yield* B.awaitExn(reader);
      // A new connection's socket takes the closed fd's number; nobody reads it yet.
      const again = tcpv4();
      yield* connect(again, getsockname(server));
      const [peer] = yield* accept(server);
      const before = backend.stats.readsAhead;
      yield* write(peer, "for nobody yet");
      yield* sleep(0.02); // a batch reports it readable
      const ahead = backend.stats.readsAhead - before;
      const buf = Buffer.alloc(64);
      const n = yield* read(again, buf);
      const reused = fdOf(again) === fd;
      for (const s of [client, server, again, peer]) yield* close(s);
      return { outcome, ahead, text: buf.subarray(0, n).toString(), reused, inUse: backend.pool.stats().inUse };
    });
    expect(got.outcome).toBe("SocketClosed");
    expect(got.reused).toBe(true);
    expect(got.ahead).toBe(0);
    expect(got.text).toBe("for nobody yet");
    expect(got.inUse).toBe(0); // no arena slot is held for read-ahead
  });
});

/** `count` numbered chunks of `size` bytes: chunk i is its number, repeated. */
function numbered(count: number, size: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => Buffer.alloc(size, `${i};`));
}

describe("native backend: queued writes", () => {
  it("the writes of a slice are sent together, in order", async () => {
    const got = await runNative(function* (backend) {
      const [client, conn, server] = yield* connectedPair();
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
      const [client, conn, server] = yield* connectedPair();
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
      const [client, conn, server] = yield* connectedPair();
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

  it("a writer far ahead of a slow reader holds at most 16 KiB it could not send yet, in one room reused, and every byte arrives in order", async () => {
    const got = await runNative(function* () {
      const [client, conn, server] = yield* connectedPair();
      // 16 MiB in 4 KiB writes to a reader that pauses after every 256 KiB:
      // the writer meets a full send buffer again and again.
      const chunks = numbered(4096, 4096);
      const expected = Buffer.concat(chunks);
      let held = 0;
      const rooms = new Set<ArrayBufferLike>();
      const reader = B.spawn(function* () {
        const buf = Buffer.alloc(65536);
        let at = 0;
        let same = true;
        for (let n: number, i = 0; (n = yield* read(client, buf)) > 0; i++) {
          // The writer is parked while this task runs: what it holds is what the kernel did not take.
          const unsent = unsentOf(conn);
          if (unsent !== null) {
            held = Math.max(held, unsent.buffer.byteLength);
            rooms.add(unsent.buffer);
          }
          same &&= buf.subarray(0, n).equals(expected.subarray(at, at + n));
          at += n;
          if (i % 4 === 3) yield* sleep(0.001);
        }
        return { at, same };
      });
      for (const c of chunks) yield* write(conn, c);
      yield* close(conn);
      const { at, same } = yield* B.awaitExn(reader);
      for (const s of [client, server]) yield* close(s);
      return { length: at, same, held, rooms: rooms.size };
    });
    expect(got.length).toBe(4096 * 4096);
    expect(got.same).toBe(true);
    expect(got.held).toBeGreaterThan(0); // queued sends did come back short
    expect(got.held).toBeLessThanOrEqual(16 * 1024);
    expect(got.rooms).toBe(1); // backing up again allocates nothing
  });

  it("close waits for the bytes of writes that returned", async () => {
    const got = await runNative(function* () {
      const [client, conn, server] = yield* connectedPair();
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
      const [client, conn, server] = yield* connectedPair();
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
      const [client, conn, server] = yield* connectedPair();
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
