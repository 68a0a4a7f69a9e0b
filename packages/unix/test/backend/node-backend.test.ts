// The end of a backend over Node handles: finaliser and drain close what is open, and drain
// settles only once no socket holds anything of Node's.
import { describe, expect, it } from "vitest";
import { type LiveSockets, NodeBackend, NodeSocket, type SocketBackend } from "../../src/backend/index.js";

class Backend extends NodeBackend {}

/** A socket that holds a Node handle from the start until `gone()`, as a real one does until its 'close'. */
class Sock extends NodeSocket {
  closes = 0;
  protected readonly live: LiveSockets<NodeSocket>;

  constructor(backend: Backend) {
    super("tcp4", backend as unknown as SocketBackend);
    this.live = backend.live;
    this.hold();
  }

  closeNow(): void {
    this.closes++;
  }

  gone(): void {
    this.release();
  }
}

describe("NodeBackend", () => {
  it("drain closes every live socket at once and settles once the last one's handle is gone", async () => {
    const backend = new Backend();
    const [a, b] = [new Sock(backend), new Sock(backend)];
    let settled = false;
    const drained = backend.drain().then(() => {
      settled = true;
    });
    expect([a.closes, b.closes], "closed at once, without waiting for anything").toEqual([1, 1]);
    a.gone();
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled, "one socket still holds a handle").toBe(false);
    b.gone();
    await drained;
    expect(backend.live.size).toBe(0);
  });

  it("drain settles at once when nothing is live", async () => {
    await new Backend().drain();
  });

  it("finaliser closes what is still open (a worker domain has no drain) and forgets the deadlines", () => {
    const backend = new Backend();
    const s = new Sock(backend);
    let fired = false;
    backend.deadline(backend.now() + 1000, () => {
      fired = true;
    });
    expect(backend.timers.size).toBe(1);
    backend.finaliser();
    expect(s.closes).toBe(1);
    expect(backend.timers.size, "the deadline is forgotten").toBe(0);
    expect(fired).toBe(false);
  });
});
