// What a socket holds of Node's, and the two facts of Node behind it: a server's 'close' comes
// before its handle is gone, and a dns.lookup cannot be cancelled.
import * as net from "node:net";
import { handleCount } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { afterHandleClose, CloseOp, LiveSockets, NodeSocket, type SocketBackend } from "../../src/backend/index.js";
import type { SocketKind } from "../../src/index.js";
import { run } from "../../src/index.js";

class Sock extends NodeSocket {
  constructor(
    kind: SocketKind,
    backend: SocketBackend,
    protected readonly live: LiveSockets<NodeSocket> | null,
  ) {
    super(kind, backend);
  }

  closeNow(): void {
    this.state = "closed";
  }
}

/** A backend whose closeNow is the socket's own (what CloseOp calls first). */
const backend = { closeNow: (s: Sock) => s.closeNow() } as unknown as SocketBackend;

describe("afterHandleClose", () => {
  it("runs once a net.Server's handle is really gone: at its 'close' event the handle is still there", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const before = handleCount("TCPServerWrap");
    const seen = await new Promise<{ atClose: number; after: number }>((resolve) => {
      server.close();
      server.once("close", () => {
        const atClose = handleCount("TCPServerWrap");
        afterHandleClose(() => resolve({ atClose, after: handleCount("TCPServerWrap") }));
      });
    });
    expect(seen.atClose, "Node's fact: 'close' comes before libuv frees the handle").toBe(before);
    expect(seen.after, "afterHandleClose: gone").toBe(before - 1);
  });
});

describe("LiveSockets", () => {
  it("keeps its sockets in the order they came, whichever leaves (first, middle, last), and settles drained() when the last one does", async () => {
    const live = new LiveSockets<NodeSocket>();
    const [a, b, c, d] = [1, 2, 3, 4].map(() => new Sock("tcp4", backend, null));
    for (const s of [a!, b!, c!]) live.add(s);
    live.add(b!);
    expect(live.all(), "an added socket is added once").toEqual([a, b, c]);
    live.delete(b!);
    expect(live.all()).toEqual([a, c]);
    expect([live.has(b!), live.size]).toEqual([false, 2]);
    live.delete(b!);
    expect(live.size, "deleting a socket not there changes nothing").toBe(2);
    live.add(d!);
    live.delete(a!);
    expect(live.all()).toEqual([c, d]);
    live.add(b!);
    live.delete(b!);
    expect(live.all(), "the last one left").toEqual([c, d]);
    let drained = false;
    const done = live.drained().then(() => (drained = true));
    live.delete(d!);
    await Promise.resolve();
    expect(drained, "one left").toBe(false);
    live.delete(c!);
    await done;
    expect([live.all(), live.size, live.has(c!)]).toEqual([[], 0, false]);
  });
});

describe("NodeSocket", () => {
  it("is live while it holds something, and its close returns once it holds nothing", async () => {
    const live = new LiveSockets<NodeSocket>();
    const s = new Sock("tcp4", backend, live);
    s.hold();
    s.hold();
    expect(live.has(s)).toBe(true);
    let closed = false;
    await run(function* () {
      setTimeout(() => s.release(), 5);
      setTimeout(() => {
        expect(closed, "one hold left: close still waits").toBe(false);
        s.release();
      }, 15);
      yield* new CloseOp(s);
      closed = true;
    });
    expect(s.state).toBe("closed");
    expect(s.released).toBe(true);
    expect(live.size).toBe(0);
    await live.drained();
  });

  it("its opening, its open error and its closes share the receive queue's cold state: each reads back what was set while chunks queue and the stream fails", async () => {
    const sock = new Sock("tcp4", backend, null);
    const op = new CloseOp(sock);
    expect(sock.opener).toBeNull();
    expect(sock.openError).toBeNull();
    sock.opener = op;
    sock.push(new Uint8Array([1, 2]));
    sock.push(new Uint8Array([3]));
    sock.openError = new Error("refused");
    sock.fail(new Error("reset"));
    expect(sock.opener).toBe(op);
    expect(sock.openError?.message).toBe("refused");
    expect(sock.error?.message).toBe("reset");
    expect(sock.queued).toBe(3);
    sock.opener = null;
    sock.openError = null;
    expect(sock.opener).toBeNull();
    expect(sock.error?.message, "the stream's error stays").toBe("reset");
    expect(sock.queued).toBe(3);
  });

  it("holds itself while a name lookup is in flight (Node cannot cancel one)", async () => {
    const live = new LiveSockets<NodeSocket>();
    const s = new Sock("tcp4", backend, live);
    const answer = await new Promise<string>((resolve, reject) => {
      s.lookup("localhost", (error, ip) => {
        expect(s.released, "still held while its callback runs").toBe(false);
        if (error) reject(error);
        else resolve(ip);
      });
      expect(live.has(s), "held from the start of the lookup").toBe(true);
    });
    expect(answer).toMatch(/^127\.|^::1$/);
    expect(s.released).toBe(true);
  });
});
