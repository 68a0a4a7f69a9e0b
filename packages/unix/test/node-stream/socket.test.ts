import { PassThrough, Readable, Writable } from "node:stream";
import * as B from "@bobbin/core";
import { failure, listenerCounts } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import {
  close,
  EndOfFile,
  fromStream,
  OwnedSockets,
  read,
  readExactly,
  run,
  SocketClosed,
  shutdown,
  sleep,
  Timeout,
  withTimeout,
  write,
} from "../../src/index.js";

/** A Writable that keeps a copy of each chunk, and calls back only on `release()`. */
class HeldWritable extends Writable {
  readonly received: Buffer[] = [];
  private readonly held: (() => void)[] = [];

  constructor() {
    super({ highWaterMark: 4 });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.held.push(() => {
      this.received.push(Buffer.from(chunk));
      callback();
    });
  }

  get waiting(): number {
    return this.held.length;
  }

  release(): void {
    for (const done of this.held.splice(0)) done();
  }
}

/** A byte stream of these chunks, then its end. */
function bytes(...chunks: string[]): Readable {
  return Readable.from(
    chunks.map((c) => Buffer.from(c)),
    { objectMode: false },
  );
}

/** The errors of a read waiting when its stream is destroyed (with `error`), and of the read after. */
function readsWhenDestroyed(error?: Error): Promise<NodeJS.ErrnoException[]> {
  return run(function* () {
    const pipe = new PassThrough();
    using sock = fromStream(pipe);
    const reader = B.spawn(function* () {
      return yield* failure(() => read(sock, Buffer.alloc(8)));
    });
    yield* sleep(0.01);
    pipe.destroy(error);
    return [yield* B.awaitExn(reader), yield* failure(() => read(sock, Buffer.alloc(8)))];
  });
}

/** Reads `sock` to its end. */
function* readAll(sock: ReturnType<typeof fromStream>, size = 7): Generator<B.Instruction, string, unknown> {
  const buf = Buffer.alloc(size);
  let text = "";
  for (let n: number; (n = yield* read(sock, buf)) > 0; ) text += buf.toString("utf8", 0, n);
  return text;
}

describe("fromStream: read", () => {
  it("reads what the stream has, in pieces as small as the buffer, then 0 at its end", async () => {
    const text = await run(function* () {
      const sock = fromStream(bytes("hello, ", "streams", "!"));
      expect(sock.kind).toBe("stream");
      expect(sock.state).toBe("connected");
      const got = yield* readAll(sock, 3);
      expect(yield* read(sock, Buffer.alloc(4))).toBe(0); // and again
      yield* close(sock);
      return got;
    });
    expect(text).toBe("hello, streams!");
  });

  it("takes no more than it was asked: the rest stays in the stream, whose 'end' comes once every byte was read", async () => {
    await run(function* () {
      const source = bytes("0123456789");
      let ended = false;
      source.on("end", () => (ended = true));
      const sock = fromStream(source);
      const one = Buffer.alloc(1);
      yield* readExactly(sock, one);
      yield* sleep(0.01);
      expect(source.readableLength).toBe(9);
      expect(ended).toBe(false);
      yield* readExactly(sock, Buffer.alloc(9));
      expect(yield* read(sock, one)).toBe(0);
      expect(ended).toBe(true);
      yield* close(sock);
    });
  });

  it("waits for bytes written later, by another task", async () => {
    await run(function* () {
      const pipe = new PassThrough();
      const sock = fromStream(pipe);
      const reader = B.spawn(readAll, sock);
      yield* sleep(0.02);
      expect(reader.status).toBe("pending");
      pipe.write("late ");
      yield* sleep(0.02);
      pipe.end("bytes");
      expect(yield* B.awaitExn(reader)).toBe("late bytes");
      yield* close(sock);
    });
  });

  it("readExactly fills its buffer across chunks, and throws EndOfFile at an early end", async () => {
    await run(function* () {
      const sock = fromStream(bytes("ab", "cdef", "g"));
      const four = Buffer.alloc(4);
      yield* readExactly(sock, four);
      expect(four.toString()).toBe("abcd");
      const e = yield* failure(() => readExactly(sock, Buffer.alloc(10)));
      expect(e).toBeInstanceOf(EndOfFile);
      expect((e as unknown as EndOfFile).read).toBe(3);
      yield* close(sock);
    });
  });

  it("two readers share the bytes: each byte goes to one of them", async () => {
    await run(function* () {
      const pipe = new PassThrough();
      const sock = fromStream(pipe);
      const readers = [B.spawn(readAll, sock, 5), B.spawn(readAll, sock, 5)];
      yield* sleep(0.01);
      const sent = "0123456789".repeat(50);
      for (let i = 0; i < sent.length; i += 25) {
        pipe.write(sent.slice(i, i + 25));
        yield* sleep(0);
      }
      pipe.end();
      const got = (yield* B.awaitAll(readers)).map((r) => (r.ok ? r.value : ""));
      expect(got.join("").length).toBe(sent.length);
      expect([...got.join("")].sort().join("")).toBe([...sent].sort().join(""));
      yield* close(sock);
    });
  });

  it("reads no further ahead than the stream's own buffer (its highWaterMark)", async () => {
    await run(function* () {
      let produced = 0;
      const endless = new Readable({
        highWaterMark: 1024,
        read() {
          produced += 256;
          this.push(Buffer.alloc(256, 1));
        },
      });
      const sock = fromStream(endless);
      yield* readExactly(sock, Buffer.alloc(100));
      yield* sleep(0.05);
      expect(produced).toBeLessThanOrEqual(2 * 1024 + 256);
      yield* close(sock);
    });
  });

  it("the stream's error is the error of the read waiting on it, and of the reads after", async () => {
    const boom = new Error("boom");
    expect(await readsWhenDestroyed(boom)).toEqual([boom, boom]);
  });

  it("a stream destroyed before its end, without an error: ERR_STREAM_PREMATURE_CLOSE", async () => {
    const errors = await readsWhenDestroyed();
    expect(errors.map((e) => e.code)).toEqual(["ERR_STREAM_PREMATURE_CLOSE", "ERR_STREAM_PREMATURE_CLOSE"]);
  });

  it("shutdown(sock, 'receive'): reads return 0, a waiting one too", async () => {
    await run(function* () {
      const pipe = new PassThrough();
      pipe.write("dropped");
      const sock = fromStream(pipe);
      yield* readExactly(sock, Buffer.alloc(2));
      const reader = B.spawn(function* () {
        yield* readExactly(sock, Buffer.alloc(5)); // the rest of "dropped"
        return yield* read(sock, Buffer.alloc(8));
      });
      yield* sleep(0.01);
      expect(reader.status).toBe("pending");
      shutdown(sock, "receive");
      expect(yield* B.awaitExn(reader)).toBe(0);
      pipe.write("more");
      expect(yield* read(sock, Buffer.alloc(8))).toBe(0);
      yield* close(sock);
    });
  });
});

describe("fromStream: write", () => {
  it("returns once the stream called back, so the buffer may be reused; a slow stream holds the writer back", async () => {
    await run(function* () {
      const slow = new HeldWritable();
      const sock = fromStream(slow);
      const buf = Buffer.from("first");
      const writer = B.spawn(function* () {
        yield* write(sock, buf);
        buf.fill("x"); // reused at once
        yield* write(sock, buf);
      });
      yield* sleep(0.02);
      expect(writer.status).toBe("pending"); // held back by the stream
      expect(slow.waiting).toBe(1);
      slow.release();
      yield* sleep(0.02);
      expect(slow.waiting).toBe(1); // the second write, one at a time
      slow.release();
      yield* B.awaitExn(writer);
      expect(slow.received.map(String)).toEqual(["first", "xxxxx"]);
      yield* close(sock);
    });
  });

  it("writes a string as UTF-8, and a range of a buffer", async () => {
    await run(function* () {
      const pipe = new PassThrough();
      const sock = fromStream(pipe);
      yield* write(sock, "héllo ");
      yield* write(sock, Buffer.from("0123456789"), 2, 3);
      shutdown(sock, "send");
      expect(yield* readAll(sock)).toBe("héllo 234");
      yield* close(sock);
    });
  });

  it("the stream's failure to write is the write's error", async () => {
    await run(function* () {
      const boom = new Error("disk full");
      const failing = new Writable({
        write(_chunk, _encoding, callback) {
          setImmediate(() => callback(boom));
        },
      });
      const sock = fromStream(failing);
      expect(yield* failure(() => write(sock, "data"))).toBe(boom);
      expect(yield* failure(() => write(sock, "more"))).toBe(boom);
      yield* close(sock);
    });
  });

  it("a stream that failed while a write was in flight: the stream's error is the write's, not the one its callback got after", async () => {
    // As a tls.TLSSocket whose certificate is refused: destroyed with the TLS
    // error, its pending write then calls back with EBADF (Node ≥ 22).
    const refused = Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
    const afterwards = Object.assign(new Error("write EBADF"), { code: "EBADF" });
    await run(function* () {
      const tlsLike = new Writable({
        write(_chunk, _encoding, callback) {
          setImmediate(() => {
            tlsLike.destroy(refused);
            callback(afterwards);
          });
        },
      });
      const sock = fromStream(tlsLike);
      expect(yield* failure(() => write(sock, "hello"))).toBe(refused);
      expect(yield* failure(() => write(sock, "more"))).toBe(refused);
      yield* close(sock);
    });
  });

  it("shutdown(sock, 'send') ends the stream; a later write is EPIPE", async () => {
    await run(function* () {
      const sink = new HeldWritable();
      const sock = fromStream(sink);
      let finished = false;
      sink.on("finish", () => (finished = true));
      shutdown(sock, "send");
      yield* sleep(0.01);
      expect(finished).toBe(true);
      expect((yield* failure(() => write(sock, "late"))).code).toBe("EPIPE");
      yield* close(sock);
    });
  });

  it("a stream ended by its owner: EPIPE", async () => {
    await run(function* () {
      const pipe = new PassThrough();
      const sock = fromStream(pipe);
      pipe.end();
      expect((yield* failure(() => write(sock, "late"))).code).toBe("EPIPE");
      yield* close(sock);
    });
  });

  it("read() of a Writable and write() of a Readable are TypeErrors", async () => {
    await run(function* () {
      const out = fromStream(new HeldWritable());
      const input = fromStream(bytes());
      expect(yield* failure(() => read(out, Buffer.alloc(1)))).toBeInstanceOf(TypeError);
      expect(yield* failure(() => write(input, "x"))).toBeInstanceOf(TypeError);
      yield* close(out);
      yield* close(input);
    });
  });
});

describe("fromStream: closing", () => {
  it("close wakes a waiting read and a waiting write with SocketClosed, destroys the stream, and removes every listener it added", async () => {
    await run(function* () {
      const pipe = new PassThrough({ highWaterMark: 4 });
      const before = listenerCounts(pipe);
      const sock = fromStream(pipe);
      const reader = B.spawn(function* () {
        return yield* failure(() => read(sock, Buffer.alloc(8)));
      });
      const held = new HeldWritable();
      const out = fromStream(held);
      const writer = B.spawn(function* () {
        return yield* failure(() => write(out, "stuck"));
      });
      yield* sleep(0.01);
      yield* close(sock);
      yield* close(out);
      expect(yield* B.awaitExn(reader)).toBeInstanceOf(SocketClosed);
      expect(yield* B.awaitExn(writer)).toBeInstanceOf(SocketClosed);
      expect(pipe.destroyed).toBe(true);
      expect(held.destroyed).toBe(true);
      expect(listenerCounts(pipe)).toEqual(before);
      expect(yield* failure(() => read(sock, Buffer.alloc(1)))).toBeInstanceOf(SocketClosed);
      yield* close(sock); // closing again waits for the same: nothing
    });
  });

  it("`using` closes it on every way out; [Symbol.dispose]() does at once", async () => {
    await run(function* () {
      const pipes = [new PassThrough(), new PassThrough(), new PassThrough()];
      {
        using _sock = fromStream(pipes[0]!);
      }
      try {
        using _sock = fromStream(pipes[1]!);
        throw new Error("leaving");
      } catch {
        // left the block
      }
      const sock = fromStream(pipes[2]!);
      sock[Symbol.dispose]();
      expect(sock.state).toBe("closed");
      yield* sleep(0.01);
      for (const p of pipes) expect(p.destroyed).toBe(true);
    });
  });

  it("an owned socket over a stream is closed when its owner fails", async () => {
    const pipe = new PassThrough();
    await expect(
      run(function* () {
        const owned = OwnedSockets.ofSocket(fromStream(pipe));
        yield* OwnedSockets.write(owned, "x");
        throw new Error("the owner fails");
      }),
    ).rejects.toThrow("the owner fails");
    expect(pipe.destroyed).toBe(true);
  });
});

describe("fromStream: cancellation and timeouts", () => {
  it("a cancelled read leaves no listener behind and loses no byte", async () => {
    await run(function* () {
      const pipe = new PassThrough();
      const sock = fromStream(pipe);
      const adapted = listenerCounts(pipe);
      for (let i = 0; i < 20; i++) {
        const reader = B.spawn(function* () {
          return yield* read(sock, Buffer.alloc(8));
        });
        yield* sleep(0);
        yield* B.cancel(reader);
      }
      expect(listenerCounts(pipe)).toEqual(adapted);
      pipe.write("kept");
      const buf = Buffer.alloc(8);
      expect(buf.toString("utf8", 0, yield* read(sock, buf))).toBe("kept");
      yield* close(sock);
    });
  });

  it("a cancelled write leaves no listener behind", async () => {
    await run(function* () {
      const held = new HeldWritable();
      const sock = fromStream(held);
      const adapted = listenerCounts(held);
      const writer = B.spawn(function* () {
        yield* write(sock, "never called back");
      });
      yield* sleep(0.01);
      yield* B.cancel(writer);
      expect(listenerCounts(held)).toEqual(adapted);
      yield* close(sock);
    });
  });

  it("withTimeout interrupts a read; the socket reads on afterwards", async () => {
    await run(function* () {
      const pipe = new PassThrough();
      const sock = fromStream(pipe);
      expect(yield* failure(() => withTimeout(0.02, read(sock, Buffer.alloc(8))))).toBeInstanceOf(Timeout);
      pipe.write("after");
      const buf = Buffer.alloc(8);
      expect(buf.toString("utf8", 0, yield* read(sock, buf))).toBe("after");
      yield* close(sock);
    });
  });

  it("close in a withTimeout scope whose deadline passed destroys the stream and returns", async () => {
    await run(function* () {
      const pipe = new PassThrough();
      const sock = fromStream(pipe);
      const steps: string[] = [];
      const error = yield* failure(() =>
        withTimeout(0.02, function* () {
          try {
            yield* read(sock, Buffer.alloc(8));
          } finally {
            yield* close(sock);
            steps.push(`closed: ${sock.state}, the stream destroyed: ${pipe.destroyed}`);
          }
        }),
      );
      expect(error).toBeInstanceOf(Timeout);
      expect(steps).toEqual(["closed: closed, the stream destroyed: true"]);
    });
  });

  it("needs no backend: works under core's run", async () => {
    const text = await B.run(function* () {
      const sock = fromStream(bytes("core"));
      const got = yield* readAll(sock);
      yield* close(sock);
      return got;
    });
    expect(text).toBe("core");
  });
});
