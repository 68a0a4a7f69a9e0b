// ReceiveQueue: received chunks waiting for readers, how a stream ends, and back-pressure on the source.

import * as B from "@bobbin/core";
import { failure, thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { BackendSocket, ReadOp, type SocketBackend } from "../../src/backend/index.js";
import { ChunkMisuse, run, SocketClosed, sleep } from "../../src/index.js";

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array, n: number): string => new TextDecoder().decode(b.subarray(0, n));

class Sock extends BackendSocket {
  constructor() {
    super("tcp4", {} as SocketBackend);
    this.state = "connected";
  }
}

/** A socket whose receiving side logs what it tells its source. */
class Logged extends Sock {
  readonly log: string[] = [];
  constructor(private readonly mark = Infinity) {
    super();
  }
  protected override get highWater(): number {
    return this.mark;
  }
  protected override releaseChunk(chunk: Uint8Array): void {
    this.log.push(`release ${new TextDecoder().decode(chunk)}`);
  }
  protected override pauseSource(): void {
    this.log.push("pause");
  }
  protected override resumeSource(): void {
    this.log.push("resume");
  }
  protected override wanted(): void {
    this.log.push("wanted");
  }
}

describe("ReceiveQueue", () => {
  it("a read takes what it asks for, across chunks, and leaves the rest; each chunk is released once read to its end", () => {
    const q = new Logged();
    q.push(bytes("hello "));
    q.push(bytes("world"));
    const buf = new Uint8Array(8);
    expect(q.read(buf, 0, 8)).toBe(8);
    expect(text(buf, 8)).toBe("hello wo");
    expect(q.log, "the first chunk is given back, the second is still being read").toEqual(["release hello "]);
    expect(q.read(buf, 0, 8)).toBe(3);
    expect(text(buf, 3)).toBe("rld");
    expect(q.queued).toBe(0);
  });

  it("nothing yet: -1, and the source hears that a read wants bytes; the end after the bytes: 0; an error after the bytes: thrown", () => {
    const q = new Logged();
    const buf = new Uint8Array(4);
    expect(q.read(buf, 0, 4)).toBe(-1);
    expect(q.log).toEqual(["wanted"]);
    q.push(bytes("ab"));
    q.end();
    expect(q.read(buf, 0, 4), "the queued bytes first").toBe(2);
    expect(q.read(buf, 0, 4), "then the end").toBe(0);
    const failed = new Sock();
    failed.push(bytes("x"));
    failed.fail(new Error("ECONNRESET"));
    expect(failed.read(buf, 0, 4)).toBe(1);
    expect(thrownBy(() => failed.read(buf, 0, 4)).message).toBe("ECONNRESET");
  });

  it("lends the first chunk whole (the rest of one partly read), never an empty one; the buffer goes back at release, the next lend or the close", () => {
    const q = new Logged();
    q.push(bytes("hello"));
    q.push(bytes(""));
    q.push(bytes("world"));
    const buf = new Uint8Array(2);
    expect(q.read(buf, 0, 2)).toBe(2);
    const rest = q.lend()!;
    expect(new TextDecoder().decode(rest.bytes), "what the read left of the first chunk").toBe("llo");
    expect(q.log, "the empty chunk went back at once; the lent one is still out").toEqual(["release "]);
    rest.release();
    expect(q.log.at(-1), "released: the whole buffer goes back").toBe("release hello");
    const world = q.lend()!;
    expect(new TextDecoder().decode(world.bytes)).toBe("world");
    expect(q.queued).toBe(0);
    expect(q.lend(), "nothing yet").toBeUndefined();
    q.close();
    expect(q.log.at(-1), "the close takes the lent chunk back").toBe("release world");
    expect(() => world.release(), "a chunk taken back is not released twice").not.toThrow();
    expect(
      q.log.filter((l) => l === "release world"),
      "given back once",
    ).toHaveLength(1);
  });

  it("pauses the source at the high-water mark and resumes it once reads bring it to half", () => {
    const q = new Logged(8);
    q.push(bytes("1234"));
    q.push(bytes("5678"));
    expect(q.paused).toBe(true);
    const buf = new Uint8Array(8);
    q.read(buf, 0, 3);
    expect(q.log.includes("resume"), "5 bytes left: above half").toBe(false);
    q.read(buf, 0, 1);
    expect(q.log.filter((e) => e === "pause" || e === "resume")).toEqual(["pause", "resume"]);
  });

  it("shutdown for receiving drops what is queued and what comes (released), reads return 0; closing makes them throw SocketClosed", () => {
    const q = new Logged();
    q.push(bytes("old"));
    q.shutdownReceive();
    q.push(bytes("new"));
    expect(q.log).toEqual(["release old", "release new"]);
    const buf = new Uint8Array(4);
    expect(q.read(buf, 0, 4)).toBe(0);
    q.close();
    expect(thrownBy(() => q.read(buf, 0, 4))).toBeInstanceOf(SocketClosed);
  });

  it("a chunk pushed with a length gives that many bytes: three queued, read across, lent and cleared", () => {
    const q = new Logged();
    q.push(bytes("ab--"), 2);
    q.push(bytes("cd-"), 2);
    q.push(bytes("ef"), 2);
    q.push(bytes("gh"), 1);
    const buf = new Uint8Array(3);
    expect(q.read(buf, 0, 3)).toBe(3);
    expect(text(buf, 3)).toBe("abc");
    expect(new TextDecoder().decode(q.lend()!.bytes), "the rest of the second").toBe("d");
    expect(new TextDecoder().decode(q.lend()!.bytes)).toBe("ef");
    expect(q.queued).toBe(1);
    q.clear();
    expect(q.log.at(-1), "the last one, dropped").toBe("release gh");
    expect(q.queued).toBe(0);
  });

  it("counts the bytes queued through pushes with lengths, partial reads, lends and an error that comes after them, whichever chunk is first", () => {
    const q = new Logged();
    expect(q.queued).toBe(0);
    q.push(bytes("abc-"), 3);
    expect(q.queued, "one chunk").toBe(3);
    q.push(bytes("de"));
    q.push(bytes("fgh"));
    expect(q.queued, "three").toBe(8);
    const buf = new Uint8Array(4);
    expect(q.read(buf, 0, 2)).toBe(2);
    expect(q.queued, "the first partly read").toBe(6);
    expect(new TextDecoder().decode(q.lend()!.bytes), "the rest of the first").toBe("c");
    expect(q.queued).toBe(5);
    q.fail(new Error("reset"));
    expect(q.read(buf, 0, 4)).toBe(4);
    expect(text(buf, 4)).toBe("defg");
    expect(q.queued, "the third partly read").toBe(1);
    expect(new TextDecoder().decode(q.lend()!.bytes)).toBe("h");
    expect(q.queued).toBe(0);
    expect(() => q.lend(), "the error, once the bytes are read").toThrow("reset");
    expect(q.error?.message).toBe("reset");
    q.push(bytes("ij"));
    expect(q.queued, "a chunk after them: first again").toBe(2);
  });

  it("keeps one read operation, reused while idle; readChunk parks on the socket itself: a read during a parked readChunk goes on, and a second readChunk is refused", async () => {
    const q = new Sock();
    await run(function* () {
      const buf = new Uint8Array(4);
      q.push(bytes("ab"));
      const kept = q.readOp(buf, 0, 4);
      expect(yield* kept).toBe(2);
      q.push(bytes("cd"));
      const again = q.readOp(buf, 0, 4);
      // (compared with ===: vitest iterates an operation it compares, which would start it)
      expect(again === kept, "idle: the same operation").toBe(true);
      expect(yield* again).toBe(2);
      const lent = B.spawn(function* () {
        const chunk = yield* q.readChunk();
        const got = new TextDecoder().decode(chunk!.bytes);
        chunk!.release();
        return got;
      });
      yield* sleep(0); // it parks
      const read = q.readOp(buf, 0, 4);
      expect(
        thrownBy(() => q.readChunk()),
        "readChunk's operation is the socket, in use: a second is refused",
      ).toBeInstanceOf(ChunkMisuse);
      q.push(bytes("ef"));
      expect(yield* B.awaitExn(lent)).toBe("ef");
      q.push(bytes("gh"));
      expect(yield* read).toBe(2);
      expect(text(buf, 2)).toBe("gh");
    });
  });

  it("a parked readChunk waits on the socket record itself (no object of its own), and a socket is not iterable: deep equality does not start a read", async () => {
    const q = new Sock();
    expect(typeof (q as unknown as Partial<Iterable<unknown>>)[Symbol.iterator], "not iterable").toBe("undefined");
    await run(function* () {
      const reader = B.spawn(function* () {
        const chunk = yield* q.readChunk();
        return new TextDecoder().decode(chunk!.bytes);
      });
      yield* sleep(0); // it parks
      expect(q.readerCount).toBe(1);
      expect(q.firstReader === q, "the reader that waits is the record").toBe(true);
      expect(q.describe()).toBe("readChunk tcp4");
      expect([q]).toEqual([q]);
      q.push(bytes("hi"));
      expect(yield* B.awaitExn(reader)).toBe("hi");
      expect(q.readerCount).toBe(0);
    });
  });

  it("a read while a chunk is lent uses an operation of its own (the lent chunk keeps the kept read's place): the chunk is still taken back at the close", async () => {
    const q = new Logged();
    q.push(bytes("ab"));
    q.push(bytes("cd"));
    await run(function* () {
      const buf = new Uint8Array(4);
      const kept = q.readOp(buf, 0, 2);
      expect([yield* kept, q.keptRead === kept], "the first chunk, read by the kept operation").toEqual([2, true]);
      const lent = q.lend()!;
      expect(q.keptRead, "a lent chunk is out: no read is kept").toBeNull();
      q.push(bytes("ef"));
      const own = q.readOp(buf, 0, 4);
      expect(own === kept, "a new operation").toBe(false);
      expect(yield* own).toBe(2);
      expect(text(buf, 2)).toBe("ef");
      expect(q.keptRead, "still none kept while the chunk is out").toBeNull();
      q.close();
      expect(q.log.at(-1), "the close takes the lent chunk back").toBe("release cd");
      expect(() => lent.release()).not.toThrow();
      const later = new Logged();
      later.push(bytes("gh"));
      later.lend()!.release();
      const op = later.readOp(buf, 0, 4);
      expect(later.keptRead === op, "given back: the next read is kept again").toBe(true);
    });
  });

  it("a socket's kind and state share one field with the queue's flags: each reads back what was set, whatever the others hold; an unknown kind is refused", () => {
    for (const kind of ["tcp4", "tcp6", "udp4", "udp6", "unix", "stream"] as const) {
      const q = new (class extends BackendSocket {
        constructor() {
          super(kind, {} as SocketBackend);
        }
      })();
      expect(q.state, "a new socket is fresh").toBe("fresh");
      q.push(bytes("x"));
      q.end();
      for (const state of ["listening", "bound", "connecting", "connected", "closed", "fresh"] as const) {
        q.state = state;
        expect([q.kind, q.state, q.ended, q.queued]).toEqual([kind, state, true, 1]);
      }
      q.shutdownReceive();
      q.closed = true;
      expect([q.kind, q.state, q.receiveShut, q.closed]).toEqual([kind, "fresh", true, true]);
    }
    const refused = thrownBy(() => {
      new (class extends BackendSocket {
        constructor() {
          super("sctp" as never, {} as SocketBackend);
        }
      })();
    });
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as Error).message).toMatch(/kind is one of tcp4, .*; got sctp/);
  });

  it("the record's phase, as the operation its readChunk parks on, shares that field with the flags, kind, state and its class's count: each reads back what was set while the others change", async () => {
    class Counted extends Sock {
      get count(): number {
        return this.ownCount;
      }
      set count(count: number) {
        this.ownCount = count;
      }
    }
    const q = new Counted();
    await run(function* () {
      const reader = B.spawn(function* () {
        const chunk = yield* q.readChunk();
        return new TextDecoder().decode(chunk!.bytes);
      });
      yield* sleep(0); // it parks
      for (const count of [1, 65535, 2]) {
        q.count = count;
        q.state = "closed";
        q.state = "connected";
        expect([q.kind, q.state, q.count, q.isWaiting, q.busy]).toEqual(["tcp4", "connected", count, true, true]);
      }
      q.push(bytes("hi"));
      expect(yield* B.awaitExn(reader)).toBe("hi");
      expect([q.kind, q.state, q.count, q.queued, q.busy]).toEqual(["tcp4", "connected", 2, 0, false]);
    });
  });

  it("ReadOp: a parked reader wakes when bytes arrive, and fails with SocketClosed when the queue closes under it", async () => {
    const q = new Sock();
    await run(function* () {
      const buf = new Uint8Array(4);
      setTimeout(() => q.push(bytes("ping")), 5);
      expect(yield* new ReadOp(q).init(buf, 0, 4)).toBe(4);
      expect(text(buf, 4)).toBe("ping");
      setTimeout(() => q.close(), 5);
      expect(yield* failure(() => new ReadOp(q).init(buf, 0, 4))).toBeInstanceOf(SocketClosed);
      yield* sleep(0);
    });
  });
});
