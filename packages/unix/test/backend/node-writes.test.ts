// What a complete write is over a Node stream: its bytes left Node (destroy(), which close calls, drops the rest).
import { Writable } from "node:stream";
import * as B from "@bobbin/core";
import { delay, failure } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { NodeWriteOp, type NodeWriter, NodeWrites } from "../../src/backend/index.js";
import { run, SocketClosed, sleep } from "../../src/index.js";

/** A stream whose writes Node's side completes only when the test says (`flush`). */
function slowStream(): { stream: Writable; flush(error?: Error): void } {
  const pending: ((error?: Error | null) => void)[] = [];
  const stream = new Writable({ highWaterMark: 1024, write: (_chunk, _encoding, callback) => void pending.push(callback) });
  return { stream, flush: (error) => pending.shift()!(error) };
}

/** A stream that writes at once (as libuv usually does). */
const quickStream = (): Writable => new Writable({ write: (_chunk, _encoding, callback) => callback() });

/** The writer a NodeWriteOp writes through. */
function writer(stream: Writable): NodeWriter & { writes: NodeWrites } {
  return { writes: new NodeWrites(), streamError: () => null, writable: () => stream, where: () => "test stream" };
}

const bytes = Buffer.from("hello");

describe("NodeWrites", () => {
  it("a write Node did at once is over at once (0); one still in Node's buffer is over at its callback", async () => {
    const quick = new NodeWrites();
    expect(quick.write(quickStream(), bytes)).toBe(0);
    const { stream, flush } = slowStream();
    const writes = new NodeWrites();
    const n = writes.write(stream, bytes);
    expect(n).toBeGreaterThan(0);
    expect(writes.done(n), "its bytes are still Node's: a destroy() now would drop them").toBe(false);
    flush();
    await delay(1);
    expect(writes.done(n)).toBe(true);
    expect(writes.failure(n, null)).toBe(null);
  });

  it("a stream gone with writes pending: they are over, and failed with the error given", () => {
    const { stream } = slowStream();
    const writes = new NodeWrites();
    const n = writes.write(stream, bytes);
    writes.abandon(new Error("the connection closed with writes pending"));
    expect(writes.done(n)).toBe(true);
    expect(writes.failure(n, null)?.message).toBe("the connection closed with writes pending");
  });
});

describe("NodeWriteOp", () => {
  it("returns only once Node wrote the bytes", async () => {
    const { stream, flush } = slowStream();
    const to = writer(stream);
    let written = false;
    await run(function* () {
      const t = B.spawn(function* () {
        yield* new NodeWriteOp(to).init(bytes, 0, bytes.length);
        written = true;
      });
      yield* sleep(0.01);
      expect(written, "Node still holds the bytes: the write waits").toBe(false);
      flush();
      yield* B.awaitExn(t);
    });
    expect(written).toBe(true);
  });

  it("fails with SocketClosed when the socket closes while it waits (the bytes may be lost)", async () => {
    const { stream } = slowStream();
    const to = writer(stream);
    // What a backend does: its closeNow closes the writes and destroys the stream; the stream's
    // 'close' abandons the writes whose callback never came.
    stream.on("close", () => to.writes.abandon(new Error("the stream closed with writes pending")));
    const error = await run(function* () {
      setTimeout(() => {
        to.writes.close();
        stream.destroy();
      }, 5);
      return yield* failure(() => new NodeWriteOp(to).init(bytes, 0, bytes.length));
    });
    expect(error).toBeInstanceOf(SocketClosed);
  });

  it("a write Node failed throws the stream's error", async () => {
    const { stream, flush } = slowStream();
    stream.on("error", () => {});
    const to = writer(stream);
    const error = await run(function* () {
      setTimeout(() => flush(Object.assign(new Error("write EPIPE"), { code: "EPIPE" })), 5);
      return yield* failure(() => new NodeWriteOp(to).init(bytes, 0, bytes.length));
    });
    expect(error.code).toBe("EPIPE");
  });
});
