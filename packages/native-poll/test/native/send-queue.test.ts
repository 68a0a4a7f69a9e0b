import { afterEach, describe, expect, it } from "vitest";
import { Errno, PollEvent, Poller, syscalls } from "../../src/backend/index.js";
import { loadAddon } from "../../src/load.js";
import { socketpair } from "../helpers.js";

const { READABLE } = PollEvent;
const NOT_SENT = Poller.NOT_SENT;

type Unsent = Array<{ fd: number; result: number; unsent: string }>;

const cleanup: Array<() => void> = [];
afterEach(() => {
  while (cleanup.length) cleanup.pop()!();
});

/** A poller with a staging area of `bytes` (and read-ahead), recording what queued sends left unsent. */
function make(bytes: number, batchSize = 16): { poller: Poller; unsent: Unsent; reads: string[] } {
  const unsent: Unsent = [];
  const reads: string[] = [];
  const poller: Poller = new Poller(
    (_fd, _events, _token, read, at) => {
      if (read > 0) reads.push(Buffer.from(poller.readArea.subarray(at, at + read)).toString());
    },
    {
      batchSize,
      readAhead: 1024,
      sendStaging: bytes,
      onSend: (fd, result, left) => unsent.push({ fd, result, unsent: Buffer.from(left).toString() }),
    },
  );
  cleanup.push(() => poller.destroy());
  return { poller, unsent, reads };
}

function pairClosedLater(): [number, number] {
  const p = socketpair();
  cleanup.push(() => {
    for (const fd of p) syscalls.close(fd);
  });
  return p;
}

function readAll(fd: number): string {
  const buf = Buffer.alloc(1 << 20);
  let out = "";
  for (let n: number; (n = syscalls.read(fd, buf)) > 0; ) out += buf.subarray(0, n).toString();
  return out;
}

const bytes = (s: string) => Buffer.from(s);

describe("Poller: queued sends", () => {
  it("NOT_SENT is the addon's", () => {
    expect(Poller.NOT_SENT).toBe(loadAddon().constants.NOT_SENT);
  });

  it("the addon makes the memories it keeps pointers into, of the sizes asked", () => {
    const { NativePoller, constants } = loadAddon();
    const handle = new NativePoller(3, () => {});
    cleanup.push(() => handle.destroy());
    expect(handle.batch.byteLength).toBe(3 * constants.EVENT_INTS * 4);
    const [staging, queue] = handle.sendQueue(64, 5);
    expect([staging.byteLength, queue.byteLength]).toEqual([64, (1 + 5 * constants.SEND_INTS) * 4]);
    expect(handle.readAhead(16).byteLength).toBe(16);
    const wants = new Int32Array(handle.wants(8));
    expect([...wants]).toEqual(new Array(8).fill(0));
    expect(() => handle.sendQueue(-1, 5)).toThrow(RangeError);
    expect(() => handle.readAhead(Number.NaN)).toThrow(RangeError);
  });

  it("sends what was staged, in order, when flushed, and copies the bytes when staging", () => {
    const { poller, unsent } = make(64);
    const [a1, b1] = pairClosedLater();
    const [a2, b2] = pairClosedLater();
    const src = bytes("one");
    expect(poller.stage(a1, src, 0, 3)).toBe(true);
    src.write("XXX"); // staged bytes are a copy
    expect(poller.stage(a2, bytes("two"), 0, 3)).toBe(true);
    expect(poller.stage(a1, bytes("--three--"), 2, 5)).toBe(true);
    expect(poller.staged).toBe(3);
    expect(readAll(b1)).toBe(""); // nothing sent before the flush
    poller.flush();
    expect(poller.staged).toBe(0);
    expect(poller.stats.sends).toBe(3);
    expect(readAll(b1)).toBe("onethree");
    expect(readAll(b2)).toBe("two");
    expect(unsent).toEqual([]);
  });

  it("a drain submits the queued sends first, in the same call: their echo can come with it", () => {
    const { poller, reads } = make(64);
    const [a, b] = pairClosedLater();
    poller.add(b, READABLE, "edge");
    poller.want(b, 64);
    poller.stage(a, bytes("ping"), 0, 4);
    expect(poller.poll()).toBe(1);
    expect(reads).toEqual(["ping"]);
    expect(poller.staged).toBe(0);
  });

  it("after a short or failed send, the fd's later sends are not tried; what is left is reported in order", () => {
    const { poller, unsent } = make(1 << 16);
    const [full, peer] = pairClosedLater();
    const [other, otherPeer] = pairClosedLater();
    // Fill full's send buffer.
    const chunk = Buffer.alloc(1 << 16, 1);
    while (syscalls.write(full, chunk) > 0);
    poller.stage(full, bytes("first"), 0, 5);
    poller.stage(other, bytes("fine"), 0, 4);
    poller.stage(full, bytes("second"), 0, 6);
    poller.flush();
    expect(unsent).toEqual([
      { fd: full, result: Errno.EAGAIN, unsent: "first" },
      { fd: full, result: NOT_SENT, unsent: "second" },
    ]);
    expect(readAll(otherPeer)).toBe("fine");
    void peer;
  });

  it("reports the error of a send to a peer that is gone", () => {
    const { poller, unsent } = make(64);
    const [a, b] = socketpair();
    cleanup.push(() => syscalls.close(a));
    syscalls.close(b);
    poller.stage(a, bytes("lost"), 0, 4);
    poller.flush();
    expect(unsent).toEqual([{ fd: a, result: Errno.EPIPE, unsent: "lost" }]);
  });

  it("refuses a send the staging area or the queue has no room for", () => {
    const { poller } = make(8, 2);
    const [a, b] = pairClosedLater();
    expect(poller.stage(a, bytes("123456789"), 0, 9)).toBe(false); // larger than the area
    expect(poller.stage(a, bytes("12345"), 0, 5)).toBe(true);
    expect(poller.stage(a, bytes("6789"), 0, 4)).toBe(false); // 5 + 4 > 8
    expect(poller.stage(a, bytes("678"), 0, 3)).toBe(true);
    expect(poller.stage(a, bytes("9"), 0, 1)).toBe(false); // the queue holds batchSize sends
    poller.flush();
    expect(readAll(b)).toBe("12345678");
    expect(poller.stage(a, bytes("9"), 0, 1)).toBe(true); // room again
    poller.flush();
    expect(() => poller.stage(a, bytes("x"), 0, 0)).toThrow(RangeError);
    expect(() => poller.stage(a, bytes("x"), 1, 1)).toThrow(RangeError);
    const plain = new Poller(() => {});
    cleanup.push(() => plain.destroy());
    expect(plain.stage(a, bytes("x"), 0, 1)).toBe(false); // no staging area: never any room
  });
});
