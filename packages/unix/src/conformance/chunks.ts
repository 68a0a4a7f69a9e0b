/**
 * `readChunk`: bytes in chunks the backend lends, the rules of the loan
 * (one chunk at a time per socket, given back at `release()`, at the next
 * `readChunk` or at the close), misuse refused with `ChunkMisuse`, and a
 * cancelled `readChunk` that leaves nothing lent and takes no byte.
 */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { type Chunk, ChunkMisuse, close, readChunk, SocketClosed, shutdown, sleep, Timeout, tcpv4, withTimeout, write } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { connectedPair, failure, pattern, thrown } from "./support.js";

/** The next chunk, which must be there. */
function* next(sock: Parameters<typeof readChunk>[0]): Generator<B.Instruction, Chunk, unknown> {
  const chunk = yield* withTimeout(5, readChunk(sock));
  expect(chunk, "a chunk, not the end of the stream").not.toBeNull();
  return chunk!;
}

/** The rule a misuse broke (fails the test for another error). */
function ruleOf(error: unknown): string {
  expect(error, "the misuse throws ChunkMisuse").toBeInstanceOf(ChunkMisuse);
  return (error as ChunkMisuse).rule;
}

/** @internal */
export function chunkTests(suite: Suite): void {
  describe("readChunk: bytes in lent chunks", () => {
    it("returns the stream's bytes in order, in chunks of at least one byte, then null at the end (again and again)", async () => {
      await suite.leakFree(function* () {
        const [sock, peer, server] = yield* connectedPair();
        yield* close(server);
        const data = pattern(7, 256 * 1024);
        const writer = B.spawn(function* () {
          for (let off = 0; off < data.length; off += 10_000) yield* write(peer, data.subarray(off, Math.min(data.length, off + 10_000)));
          shutdown(peer, "send");
        });
        const got: Buffer[] = [];
        let count = 0;
        for (let chunk: Chunk | null; (chunk = yield* withTimeout(5, readChunk(sock))) !== null; count++) {
          expect(chunk.length, "a chunk has bytes").toBeGreaterThan(0);
          expect(chunk.bytes.length).toBe(chunk.length);
          got.push(Buffer.from(chunk.bytes));
          // Every other chunk is released; the others go back at the next readChunk.
          if (count % 2 === 0) chunk.release();
        }
        expect(Buffer.concat(got).equals(data), "every byte, in order").toBe(true);
        expect(yield* readChunk(sock), "the end of the stream stays the end").toBeNull();
        yield* B.awaitExn(writer);
        yield* close(sock);
        yield* close(peer);
      });
    });

    it("a chunk is lent until release(), the next readChunk or the close: then its bytes throw ChunkMisuse; releasing twice throws", async () => {
      await suite.leakFree(function* () {
        const [sock, peer, server] = yield* connectedPair();
        yield* close(server);

        yield* write(peer, "one");
        const one = yield* next(sock);
        expect(Buffer.from(one.bytes).toString()).toBe("one");
        one.release();
        expect(ruleOf(thrown(() => one.bytes)), "bytes after release()").toBe("use after release");
        expect(ruleOf(thrown(() => one.length)), "length after release()").toBe("use after release");
        expect(ruleOf(thrown(() => one.release())), "a second release()").toBe("released twice");

        yield* write(peer, "two");
        const two = yield* next(sock);
        yield* write(peer, "three");
        const three = yield* next(sock);
        expect(ruleOf(thrown(() => two.bytes)), "the next readChunk took the chunk back").toBe("use after release");
        expect(() => two.release(), "releasing a chunk taken back is not releasing twice").not.toThrow();
        expect(Buffer.from(three.bytes).toString(), "the new chunk is whole").toBe("three");

        yield* close(sock);
        expect(ruleOf(thrown(() => three.bytes)), "the close took the chunk back").toBe("use after release");
        expect(() => three.release()).not.toThrow();
        yield* close(peer);
      });
    });

    it("a second readChunk while one waits on the socket throws ChunkMisuse; the first still gets the bytes", async () => {
      await suite.leakFree(function* () {
        const [sock, peer, server] = yield* connectedPair();
        yield* close(server);
        const first = B.spawn(function* () {
          const chunk = yield* next(sock);
          const text = Buffer.from(chunk.bytes).toString();
          chunk.release();
          return text;
        });
        yield* sleep(0.01); // it parks: nothing has arrived
        const error = yield* failure(() => readChunk(sock));
        expect(ruleOf(error), "two readChunks of one socket at once").toBe("concurrent readChunk");
        yield* write(peer, "for the first");
        expect(yield* B.awaitExn(first), "the refused readChunk took nothing").toBe("for the first");
        yield* close(sock);
        yield* close(peer);
      });
    });

    it("a readChunk cancelled while it waits (timeout, cancelled task) leaves nothing lent and takes no byte", async () => {
      await suite.leakFree(function* () {
        const [sock, peer, server] = yield* connectedPair();
        yield* close(server);
        const error = yield* failure(() => withTimeout(0.02, readChunk(sock)));
        expect(error, "a readChunk cancelled by withTimeout throws Timeout").toBeInstanceOf(Timeout);

        const parked = new L.Trigger();
        const task = B.spawn(function* () {
          parked.signal();
          yield* readChunk(sock);
        });
        yield* parked.wait();
        yield* sleep(0.01);
        yield* B.cancel(task);

        yield* write(peer, "late");
        const chunk = yield* next(sock);
        expect(Buffer.from(chunk.bytes).toString(), "the bytes that came after go to the next readChunk, whole").toBe("late");
        chunk.release();
        yield* close(sock);
        yield* close(peer);
      });
    });

    it("a readChunk waiting when the socket closes throws SocketClosed; readChunk needs a connected stream socket", async () => {
      await suite.leakFree(function* () {
        const [sock, peer, server] = yield* connectedPair();
        yield* close(server);
        const reader = B.spawn(function* () {
          return yield* failure(() => readChunk(sock));
        });
        yield* sleep(0.01);
        yield* close(sock);
        expect(yield* B.awaitExn(reader), "the waiting readChunk").toBeInstanceOf(SocketClosed);
        expect(
          thrown(() => readChunk(sock)),
          "readChunk on a closed socket",
        ).toBeInstanceOf(SocketClosed);
        const fresh = tcpv4();
        expect(
          thrown(() => readChunk(fresh)),
          "readChunk on a socket that is not connected",
        ).toBeInstanceOf(TypeError);
        yield* close(fresh);
        yield* close(peer);
      });
    });
  });
}
