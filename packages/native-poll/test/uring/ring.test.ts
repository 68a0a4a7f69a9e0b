// The JavaScript half of the ring, against the kernel: SQEs written into the
// shared queue, CQEs read from it, provided buffers and staging slots.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { delay, until } from "@bobbin/test-support";
import { afterEach, describe, expect, it } from "vitest";
import { Errno, syscalls } from "../../src/backend/index.js";
import type { UringConfig } from "../../src/uring/native.js";
import { type CompletionSink, Ring } from "../../src/uring/ring.js";
import { requireUring } from "../../src/uring/support.js";
import { noUring, socketpair, uring } from "../helpers.js";

/** The kernel's IOSQE_CQE_SKIP_SUCCESS (include/uapi/linux/io_uring.h): a request that succeeds posts no completion. */
const SQE_CQE_SKIP_SUCCESS = 1 << 6;

type Completion = [fd: number, tag: number, res: number, flags: number];

const cleanup: Array<() => void> = [];
afterEach(async () => {
  while (cleanup.length) cleanup.pop()!();
  await delay(); // the rings close in uv_close's callback
});

/** A failure of the ring's pump fails the test (thrown from Node's callback). */
const failed = (error: Error): never => {
  throw error;
};

function make(config: Partial<UringConfig> = {}, sink?: CompletionSink): { ring: Ring; seen: Completion[] } {
  const full: UringConfig = { entries: 8, buffers: 4, bufferSize: 64, staging: 2, stagingSize: 64, taskRun: 0, ...config };
  const seen: Completion[] = [];
  const ring = new Ring(requireUring(), full, sink ?? { complete: (fd, tag, res, flags) => void seen.push([fd, tag, res, flags]), failed });
  ring.handle.unref();
  cleanup.push(() => ring.handle.destroy());
  return { ring, seen };
}

function pair(): [number, number] {
  const [a, b] = socketpair();
  cleanup.push(() => {
    syscalls.close(a);
    syscalls.close(b);
  });
  return [a, b];
}

describe.skipIf(!uring.available)(`the ring${noUring}`, () => {
  it("a multishot recv fills provided buffers, and buffers given back are taken again after the ring wraps", () => {
    const { ring, seen } = make({ buffers: 4 });
    const c = ring.constants;
    const [a, b] = pair();
    ring.recv(a, 7);
    const got: string[] = [];
    for (let i = 0; i < 20; i++) {
      syscalls.write(b, Buffer.from(`message ${i}`));
      ring.submit();
      const [fd, tag, res, flags] = seen.pop()!;
      expect([fd, tag]).toEqual([a, 7]);
      expect(flags & c.CQE_F_MORE).not.toBe(0); // still armed
      expect(flags & c.CQE_F_BUFFER).not.toBe(0);
      const bid = flags >>> c.CQE_BUFFER_SHIFT;
      got.push(Buffer.from(ring.buffers.subarray(bid * 64, bid * 64 + res)).toString());
      ring.giveBuffer(bid);
    }
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => `message ${i}`));
  });

  it("without buffers given back, the multishot recv ends with ENOBUFS", () => {
    const { ring, seen } = make({ buffers: 2 });
    const [a, b] = pair();
    ring.recv(a, 1);
    for (let i = 0; i < 3; i++) {
      syscalls.write(b, Buffer.from("x"));
      ring.submit();
    }
    expect(seen.map(([, , res]) => res)).toEqual([1, 1, Errno.ENOBUFS]);
    expect(seen[2]![3] & ring.constants.CQE_F_MORE).toBe(0);
  });

  it("a send goes out from its staging slot", () => {
    const { ring, seen } = make();
    const [a, b] = pair();
    const slot = ring.takeSlot();
    ring.staging.set(Buffer.from("hello, ring"), slot * 64 + 3);
    ring.send(a, slot, 3, 11, 9);
    ring.submit();
    expect(seen).toEqual([[a, 9, 11, 0]]);
    const out = Buffer.alloc(32);
    expect(out.subarray(0, syscalls.read(b, out)).toString()).toBe("hello, ring");
    ring.freeSlot(slot);
  });

  it("hands out staging slots until none is free", () => {
    const { ring } = make({ staging: 3 });
    const slots = [ring.takeSlot(), ring.takeSlot(), ring.takeSlot()];
    expect(slots.sort()).toEqual([0, 1, 2]);
    expect(ring.takeSlot()).toBe(-1);
    ring.freeSlot(1);
    expect(ring.takeSlot()).toBe(1);
  });

  it("a cancelled request ends with ECANCELED; the cancel says it found it", () => {
    const { ring, seen } = make();
    const [a] = pair();
    ring.poll(a, ring.constants.POLLIN, 3);
    ring.submit();
    expect(seen).toEqual([]);
    ring.cancel(a, 3, 4);
    ring.submit();
    expect(seen.sort((x, y) => x[1] - y[1])).toEqual([
      [a, 3, Errno.ECANCELED, 0],
      [a, 4, 0, 0],
    ]);
  });

  it("submits by itself when the submission queue is full; completions beyond the CQ come on the next entry", () => {
    const { ring, seen } = make({ entries: 4 });
    const [a] = pair();
    for (let i = 0; i < 10; i++) ring.poll(a, ring.constants.POLLIN, 100 + i);
    ring.submit();
    for (let i = 0; i < 10; i++) ring.cancel(a, 100 + i, 200 + i);
    // 20 completions overflow the 16 of the CQ: the kernel keeps the rest until the next entry.
    for (let before = -1; seen.length !== before; ) {
      before = seen.length;
      ring.submit();
    }
    expect(seen.filter(([, tag, res]) => tag < 200 && res === Errno.ECANCELED).length).toBe(10);
    expect(seen.filter(([, tag, res]) => tag >= 200 && res === 0).length).toBe(10);
  });

  it("a sink that throws loses no completion: the first error comes after the batch", () => {
    const seen: Completion[] = [];
    const { ring } = make(
      {},
      {
        complete: (fd, tag, res, flags) => {
          seen.push([fd, tag, res, flags]);
          if (seen.length === 1) throw new Error("first");
        },
        failed,
      },
    );
    const [a] = pair();
    for (let i = 0; i < 3; i++) ring.poll(a, ring.constants.POLLIN, i);
    ring.submit();
    for (let i = 0; i < 3; i++) ring.cancel(a, i, 10 + i);
    expect(() => ring.submit()).toThrow("first");
    expect(seen.length).toBe(6);
    ring.submit();
    expect(seen.length).toBe(6);
  });

  // With DEFER_TASKRUN, completion work waits in the kernel for an entry into
  // the ring, and the eventfd is written when the first of it is queued —
  // unless the pump has turned notifications off. Here that work is queued
  // inside the pump's own entry, after the work that entry ran: a poll whose
  // success posts nothing holds the last reference to socket x; running it
  // drops that reference, closing x happens on the entry's way out, and x's
  // peer sees the hang-up (work for its multishot recv). The entry brought no
  // completion: a pump that stopped there, though the SQ flags said work was
  // pending, left that work waiting for an eventfd write that never came.
  it.each([
    ["auto", 0],
    ["coop", 2],
    ["signal", 3],
  ])("completion work queued during the pump's own entry reaches JavaScript (taskRun %s)", async (_, taskRun) => {
    const { ring, seen } = make({ taskRun });
    const [x, peer] = socketpair();
    cleanup.push(() => syscalls.close(peer));
    ring.recv(peer, 1);
    ring.poll(x, ring.constants.POLLIN, 2);
    const sqes = new Uint8Array(ring.handle.sqes);
    const mask = new Uint32Array(ring.handle.rings)[ring.handle.layout.sqMask >> 2]!;
    const flags = (((ring.control[0]! - 1) & mask) << 6) + 1; // the poll's SQE: its flags byte
    sqes[flags] = sqes[flags]! | SQE_CQE_SKIP_SUCCESS;
    ring.submit();
    expect(syscalls.close(x)).toBe(0); // the poll holds x's last reference now
    syscalls.write(peer, Buffer.from("x")); // x is readable: the poll's work is queued, the eventfd written
    await until(() => seen.some(([fd, tag]) => fd === peer && tag === 1), {
      ms: 5000,
      what: "the peer's recv to complete (x hung up), delivered by the pump",
    });
  });

  it("the pump returns to Node's loop when the SQ flags say task work is pending but entering brings nothing", () => {
    // In a child process: a pump that spins never lets this one time out.
    const fixture = fileURLToPath(new URL("./fixtures/stale-taskrun.mjs", import.meta.url));
    const child = spawnSync(process.execPath, [fixture], { encoding: "utf8", timeout: 15_000, killSignal: "SIGKILL" });
    expect(child.signal, "the pump spun until the child was killed").toBeNull();
    expect(child.stdout.trim()).toBe("pumped");
    expect(child.status).toBe(0);
  }, 30_000);
});
