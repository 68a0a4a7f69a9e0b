import { closeSync, openSync } from "node:fs";
import { delay, noProcFds, openFdsOf, procFds, until } from "@bobbin/test-support";
import { afterEach, describe, expect, it } from "vitest";
import { PollEvent, Poller, syscalls } from "../src/backend/index.js";
import { pipe, socketpair } from "./helpers.js";

const { READABLE, WRITABLE, HANGUP } = PollEvent;

type Seen = Array<[fd: number, events: number, token: number]>;

const cleanup: Array<() => void> = [];
afterEach(() => {
  while (cleanup.length) cleanup.pop()!();
});

function make(options: ConstructorParameters<typeof Poller>[1] = {}): { poller: Poller; seen: Seen } {
  const seen: Seen = [];
  const poller = new Poller((fd, events, token) => seen.push([fd, events, token]), options);
  cleanup.push(() => poller.destroy());
  return { poller, seen };
}

function closeLater(...fds: number[]): void {
  cleanup.push(() => {
    for (const fd of fds) syscalls.close(fd);
  });
}

const byte = Buffer.from("x");

describe("Poller: modes", () => {
  it("edge-triggered: one event per readiness change", () => {
    const { poller, seen } = make();
    const [r, w] = pipe();
    closeLater(r, w);
    const token = poller.add(r, READABLE, "edge");
    expect(token).toBeGreaterThan(0);
    syscalls.write(w, byte);
    expect(poller.poll()).toBe(1);
    expect(seen).toEqual([[r, READABLE, token]]);
    expect(poller.poll()).toBe(0); // still readable, but no new edge
    syscalls.write(w, byte);
    expect(poller.poll()).toBe(1);
    expect(seen.length).toBe(2);
  });

  it("level-triggered: reported while ready", () => {
    const { poller, seen } = make();
    const [r, w] = pipe();
    closeLater(r, w);
    poller.add(r, READABLE, "level");
    syscalls.write(w, byte);
    poller.poll();
    poller.poll();
    poller.poll();
    expect(seen.length).toBe(3);
    syscalls.read(r, Buffer.alloc(8));
    expect(poller.poll()).toBe(0);
  });

  it("one-shot: one event, then nothing until rearm (which reports a still-ready fd)", () => {
    const { poller, seen } = make();
    const [r, w] = pipe();
    closeLater(r, w);
    poller.add(r, READABLE, "oneshot");
    syscalls.write(w, byte);
    expect(poller.poll()).toBe(1);
    syscalls.write(w, byte);
    expect(poller.poll()).toBe(0);
    poller.rearm(r);
    expect(poller.poll()).toBe(1);
    expect(poller.poll()).toBe(0);
    expect(seen.length).toBe(2);
  });

  it("disarm stops events (even queued ones) until rearm", () => {
    const { poller, seen } = make();
    const [r, w] = pipe();
    closeLater(r, w);
    poller.add(r, READABLE, "level");
    syscalls.write(w, byte);
    poller.disarm(r);
    expect(poller.poll()).toBe(0);
    poller.rearm(r);
    expect(poller.poll()).toBe(1);
    expect(seen.length).toBe(1);
  });

  it("modify changes the interest", () => {
    const { poller, seen } = make();
    const [a, b] = socketpair();
    closeLater(a, b);
    poller.add(a, READABLE, "level");
    expect(poller.poll()).toBe(0); // writable, but not asked for
    poller.modify(a, READABLE | WRITABLE);
    expect(poller.poll()).toBe(1);
    expect(seen[0]![1] & WRITABLE).toBe(WRITABLE);
  });

  it("reports a hang-up when the other end closes", () => {
    const { poller, seen } = make();
    const [a, b] = socketpair();
    closeLater(a);
    poller.add(a, READABLE, "edge");
    syscalls.close(b);
    poller.poll();
    expect(seen.length).toBe(1);
    expect(seen[0]![1] & HANGUP).toBe(HANGUP);
    expect(syscalls.read(a, Buffer.alloc(4))).toBe(0);
  });
});

describe("Poller: registrations and generation tokens", () => {
  it("every registration takes a new token; token() tells the live one", () => {
    const { poller } = make();
    const [r, w] = pipe();
    closeLater(r, w);
    const t1 = poller.add(r, READABLE);
    expect(poller.token(r)).toBe(t1);
    poller.remove(r);
    expect(poller.token(r)).toBe(0);
    const t2 = poller.add(r, READABLE);
    expect(t2).not.toBe(t1);
    expect(poller.registered).toBe(1);
  });

  it("drops the rest of a batch's events for an fd removed while handling it", () => {
    const fds = [pipe(), pipe(), pipe()];
    for (const [r, w] of fds) closeLater(r, w);
    const seen: number[] = [];
    const poller = new Poller((fd) => {
      seen.push(fd);
      // The first event handled removes the two other fds.
      if (seen.length === 1) for (const [r] of fds) if (r !== fd) poller.remove(r);
    });
    cleanup.push(() => poller.destroy());
    for (const [r, w] of fds) {
      poller.add(r, READABLE, "level");
      syscalls.write(w, byte);
    }
    poller.poll();
    expect(seen.length).toBe(1);
  });

  it("drops events of a closed fd whose number is reused in the same batch", () => {
    const [r1, w1] = pipe();
    const [r2, w2] = pipe();
    closeLater(w1, r2, w2);
    let reused = -1;
    const seen: Array<[number, number]> = [];
    const poller = new Poller((fd, _events, token) => {
      seen.push([fd, token]);
      if (fd === r2 && reused === -1) {
        // Close r1 and make a new fd with (usually) the same number, registered again.
        poller.close(r1);
        const [r3, w3] = pipe();
        closeLater(r3, w3);
        reused = r3;
        poller.add(r3, READABLE, "level");
      }
    });
    cleanup.push(() => poller.destroy());
    poller.add(r2, READABLE, "level");
    const t1 = poller.add(r1, READABLE, "level");
    syscalls.write(w2, byte);
    syscalls.write(w1, byte); // r1 is ready too: its event is in the same batch, after r2's
    poller.poll();
    // r1's event (old token) was not delivered, whether or not the number was reused.
    expect(seen.some(([, t]) => t === t1)).toBe(false);
  });

  it("errors are Node-style: EEXIST, ENOENT, EPERM", () => {
    const { poller } = make();
    const [r, w] = pipe();
    closeLater(r, w);
    poller.add(r, READABLE);
    expect(() => poller.add(r, READABLE)).toThrow(expect.objectContaining({ code: "EEXIST", syscall: "epoll_ctl" }));
    expect(() => poller.remove(w)).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(() => poller.rearm(w)).toThrow(expect.objectContaining({ code: "ENOENT" }));
    const file = openSync(new URL(import.meta.url), "r");
    try {
      expect(() => poller.add(file, READABLE)).toThrow(expect.objectContaining({ code: "EPERM" }));
    } finally {
      closeSync(file);
    }
    expect(() => poller.add(r, 0)).toThrow(RangeError);
    expect(() => poller.add(w, READABLE, "sometimes" as never)).toThrow(RangeError);
    expect(() => poller.add("3" as never, READABLE)).toThrow(TypeError);
  });

  it("close() unregisters and closes", () => {
    const { poller } = make();
    const [r, w] = pipe();
    closeLater(w);
    poller.add(r, READABLE);
    poller.close(r);
    expect(poller.registered).toBe(0);
    expect(syscalls.read(r, Buffer.alloc(1))).toBeLessThan(0); // EBADF (unless reused)
  });
});

describe("Poller: in Node's loop", () => {
  it("delivers batches through the uv_poll handle", async () => {
    const { poller, seen } = make();
    const [r, w] = pipe();
    closeLater(r, w);
    poller.add(r, READABLE);
    setTimeout(() => syscalls.write(w, byte), 5);
    await until(() => seen.length === 1);
    await delay(10);
    expect(seen.length).toBe(1); // edge: once
  });

  it("delivers more events than a batch holds over several turns", async () => {
    const { poller, seen } = make({ batchSize: 2 });
    const pipes = Array.from({ length: 7 }, () => pipe());
    for (const [r, w] of pipes) {
      closeLater(r, w);
      poller.add(r, READABLE, "oneshot");
      syscalls.write(w, byte);
    }
    await until(() => seen.length === 7);
    expect(new Set(seen.map(([fd]) => fd)).size).toBe(7);
  });

  it("stats count the batches of Node's loop and the polls apart, with their events", async () => {
    const { poller, seen } = make({ batchSize: 2 });
    const pipes = Array.from({ length: 3 }, () => pipe());
    for (const [r, w] of pipes) {
      closeLater(r, w);
      poller.add(r, READABLE);
    }
    syscalls.write(pipes[0]![1], byte);
    expect(poller.poll()).toBe(1);
    expect(poller.poll()).toBe(0);
    expect(poller.stats).toEqual({ batches: 0, batchEvents: 0, polls: 2, pollEvents: 1, readsAhead: 0, sends: 0 });
    syscalls.read(pipes[0]![0], Buffer.alloc(1)); // empty again: the next byte is a new edge
    for (const [, w] of pipes) syscalls.write(w, byte);
    await until(() => seen.length === 4);
    await delay(10);
    expect(poller.stats.batches).toBeGreaterThanOrEqual(2); // 2 events per batch at most
    expect(poller.stats.batchEvents).toBe(3);
    expect(poller.stats).toMatchObject({ polls: 2, pollEvents: 1 });
  });

  it("interrupt() wakes the loop with onInterrupt", async () => {
    let woken = 0;
    const { poller } = make({ onInterrupt: () => woken++ });
    poller.interrupt();
    poller.interrupt();
    await until(() => woken >= 1);
    await delay(10);
    expect(woken).toBe(1); // two interrupts before a drain: one wake-up
  });

  it("a throwing handler does not lose the rest of the batch", () => {
    const fds = [pipe(), pipe()];
    for (const [r, w] of fds) closeLater(r, w);
    const seen: number[] = [];
    const poller = new Poller((fd) => {
      seen.push(fd);
      if (seen.length === 1) throw new Error("boom");
    });
    cleanup.push(() => poller.destroy());
    for (const [r, w] of fds) {
      poller.add(r, READABLE);
      syscalls.write(w, byte);
    }
    expect(() => poller.poll()).toThrow("boom");
    expect(seen.length).toBe(2);
  });

  it("the handler may destroy the poller mid-batch, but not poll() into the batch it is handling", async () => {
    const [r, w] = pipe();
    closeLater(r, w);
    let error: unknown;
    let calls = 0;
    const poller = new Poller(() => {
      calls++;
      try {
        poller.poll();
      } catch (e) {
        error = e;
      }
      poller.destroy();
    });
    cleanup.push(() => poller.destroy());
    poller.add(r, READABLE, "level");
    syscalls.write(w, byte);
    await until(() => calls === 1);
    await delay(10);
    expect(calls).toBe(1);
    expect(String(error)).toMatch(/inside the poller's handler/);
  });

  it.skipIf(!procFds)(`destroy() closes the set and makes further calls fail${noProcFds}`, async () => {
    await delay(5); // earlier tests' pollers finish closing
    const before = openFdsOf("eventpoll");
    const poller = new Poller(() => {});
    expect(openFdsOf("eventpoll")).toBe(before! + 1);
    expect(poller.fd).toBeGreaterThan(2);
    poller.destroy();
    poller.destroy();
    expect(() => poller.add(0, READABLE)).toThrow(expect.objectContaining({ code: "ERR_BOBBIN_POLLER_DESTROYED" }));
    return until(() => openFdsOf("eventpoll")! <= before!); // closed by uv_close's callback
  });

  it("validates its options", () => {
    expect(() => new Poller(null as never)).toThrow(TypeError);
    expect(() => new Poller(() => {}, { batchSize: 0 })).toThrow(RangeError);
  });
});

describe("Poller: failures of the system calls it makes", () => {
  it("a failed epoll_wait/kevent throws an error naming it, never a drain of 0 events", () => {
    const { poller } = make({ ref: false });
    const [r, w] = pipe();
    closeLater(r, w);
    poller.add(r, READABLE, "level");
    syscalls.write(w, byte);
    // The set's own fd closed behind the poller's back (and nothing opened since, so its number is not reused).
    expect(syscalls.close(poller.fd)).toBe(0);
    let error: NodeJS.ErrnoException | undefined;
    try {
      poller.poll(0);
    } catch (e) {
      error = e as NodeJS.ErrnoException;
    }
    expect(error?.code).toBe("EBADF");
    expect(error?.syscall).toMatch(/^(epoll_wait|kevent)$/);
  });
});
