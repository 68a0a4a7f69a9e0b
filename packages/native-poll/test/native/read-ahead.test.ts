import { afterEach, describe, expect, it } from "vitest";
import { PollEvent, Poller, syscalls } from "../../src/backend/index.js";
import { loadAddon } from "../../src/load.js";
import { pipe, socketpair } from "../helpers.js";

const { READABLE } = PollEvent;
const NOT_READ = Poller.NOT_READ;

type Seen = Array<{ fd: number; read: number; bytes: string }>;

const cleanup: Array<() => void> = [];
afterEach(() => {
  while (cleanup.length) cleanup.pop()!();
});

/** A poller with a read-ahead area of `bytes`, recording each event's read and the bytes it brought. */
function make(bytes: number): { poller: Poller; seen: Seen } {
  const seen: Seen = [];
  const poller: Poller = new Poller(
    (fd, _events, _token, read, at) => {
      seen.push({ fd, read, bytes: read > 0 ? Buffer.from(poller.readArea.subarray(at, at + read)).toString() : "" });
    },
    { readAhead: bytes },
  );
  cleanup.push(() => poller.destroy());
  return { poller, seen };
}

function pipeClosedLater(): [number, number] {
  const p = pipe();
  cleanup.push(() => {
    for (const fd of p) syscalls.close(fd);
  });
  return p;
}

describe("Poller: read-ahead", () => {
  it("NOT_READ is the addon's", () => {
    expect(Poller.NOT_READ).toBe(loadAddon().constants.NOT_READ);
  });

  it("reads what an fd's reader wants with the batch, and nothing for an fd nobody wants", () => {
    const { poller, seen } = make(64);
    const [r1, w1] = pipeClosedLater();
    const [r2, w2] = pipeClosedLater();
    poller.add(r1, READABLE, "edge");
    poller.add(r2, READABLE, "edge");
    poller.want(r1, 4);
    syscalls.write(w1, Buffer.from("abcdefgh"));
    syscalls.write(w2, Buffer.from("xyz"));
    expect(poller.poll()).toBe(2);
    expect(seen).toEqual([
      { fd: r1, read: 4, bytes: "abcd" }, // no more than it wants: the rest stays in the pipe
      { fd: r2, read: NOT_READ, bytes: "" },
    ]);
    expect(poller.stats.readsAhead).toBe(1);
    const rest = Buffer.alloc(16);
    expect(syscalls.read(r1, rest)).toBe(4);
    expect(rest.subarray(0, 4).toString()).toBe("efgh");
  });

  it("reads no further than its area: a reader it has no room for reads for itself", () => {
    const { poller, seen } = make(6);
    const [r1, w1] = pipeClosedLater();
    const [r2, w2] = pipeClosedLater();
    const [r3, w3] = pipeClosedLater();
    for (const r of [r1, r2, r3]) {
      poller.add(r, READABLE, "edge");
      poller.want(r, 4);
    }
    for (const w of [w1, w2, w3]) syscalls.write(w, Buffer.from("1234"));
    expect(poller.poll()).toBe(3);
    // The first read takes 4 bytes, the second the 2 left in the area, the third nothing.
    expect(seen.map((e) => [e.read, e.bytes])).toEqual([
      [4, "1234"],
      [2, "12"],
      [NOT_READ, ""],
    ]);
  });

  it("reports the end of the stream and errors as the read's result", () => {
    const { poller, seen } = make(64);
    const [a, b] = socketpair();
    cleanup.push(() => syscalls.close(a));
    poller.add(a, READABLE, "edge");
    poller.want(a, 8);
    syscalls.close(b);
    poller.poll();
    expect(seen).toEqual([{ fd: a, read: 0, bytes: "" }]);
  });

  it("forgets what an fd wanted when it is closed: a new fd of the same number is not read for", () => {
    const { poller, seen } = make(64);
    const [r, w] = pipe();
    poller.add(r, READABLE, "edge");
    poller.want(r, 8);
    poller.close(r);
    syscalls.close(w);
    const [r2, w2] = pipeClosedLater();
    expect(r2).toBe(r); // the lowest free number comes back
    poller.add(r2, READABLE, "edge");
    syscalls.write(w2, Buffer.from("data"));
    poller.poll();
    expect(seen).toEqual([{ fd: r2, read: NOT_READ, bytes: "" }]);
  });

  it("keeps reading for fds beyond its first table (the table grows and the addon gets it)", () => {
    const { poller, seen } = make(64);
    const held: number[] = [];
    cleanup.push(() => {
      for (const fd of held) syscalls.close(fd);
    });
    let r = -1;
    let w = -1;
    // Push the fd numbers past the first table of 256.
    while (r < 300) {
      [r, w] = pipe();
      held.push(r, w);
    }
    poller.add(r, READABLE, "edge");
    poller.want(r, 8);
    syscalls.write(w, Buffer.from("far"));
    poller.poll();
    expect(seen).toEqual([{ fd: r, read: 3, bytes: "far" }]);
  });

  it("is refused without a read-ahead area, and for an fd that is not registered", () => {
    const plain = new Poller(() => {});
    cleanup.push(() => plain.destroy());
    expect(() => plain.want(0, 1)).toThrow(RangeError);
    const { poller } = make(8);
    expect(() => poller.want(12345, 1)).toThrow(/not registered/);
    expect(() => new Poller(() => {}, { readAhead: -1 })).toThrow(RangeError);
  });
});
