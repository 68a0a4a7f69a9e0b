import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { syscalls } from "../src/backend/index.js";
import { ArenaOverflow, ArenaPool, type Slot, SlotNotAllocated } from "../src/index.js";
import { pipe } from "./helpers.js";

function allocN(pool: ArenaPool, n: number): Slot[] {
  const out: Slot[] = [];
  for (let i = 0; i < n; i++) out.push(pool.alloc()!);
  return out;
}

/** Writes one byte past the end of `slot` through a wider view of its arena. */
/** Changes the first byte past the slot (its canary's): flipped, never rewritten with the value it may already have. */
function overrun(slot: Slot): void {
  const b = slot.buffer;
  const past = new Uint8Array(b.buffer, b.byteOffset, b.length + 1);
  past[b.length] = ~past[b.length]! & 0xff;
}

for (const memory of ["mmap", "js"] as const) {
  describe(`ArenaPool (${memory} memory)`, () => {
    it("hands out the lowest free slot, 64 per arena", () => {
      const pool = new ArenaPool({ slotSize: 100, memory });
      expect(pool.memory).toBe(memory);
      const slots = allocN(pool, 65);
      expect(slots.map((s) => s.id)).toEqual(Array.from({ length: 65 }, (_, i) => i));
      expect(slots[64]!.arena).toBe(1);
      expect(slots[64]!.index).toBe(0);
      expect(pool.stats()).toMatchObject({ arenas: 2, online: 2, inUse: 65, slotSize: 100 });
      pool.release(slots[5]!);
      pool.release(slots[3]!);
      expect(pool.alloc()!.id).toBe(3); // first fit: the lowest free slot
      expect(pool.alloc()!.id).toBe(5);
      pool.close();
    });

    it("prefers the arena of the last release", () => {
      const pool = new ArenaPool({ slotSize: 64, memory });
      const slots = allocN(pool, 128); // arenas 0 and 1 full
      pool.release(slots[70]!); // arena 1
      pool.release(slots[10]!); // arena 0, last
      expect(pool.alloc()!.id).toBe(10);
      pool.release(slots[11]!); // arena 0
      pool.release(slots[71]!); // arena 1, last
      expect(pool.alloc()!.id).toBe(70);
      expect(pool.alloc()!.id).toBe(71);
      expect(pool.alloc()!.id).toBe(11); // arena 1 is full again: any arena with room
      pool.close();
    });

    it("slots are separate buffers of exactly slotSize bytes", () => {
      const pool = new ArenaPool({ slotSize: 1000, memory });
      const [a, b] = allocN(pool, 2);
      expect(a!.buffer.length).toBe(1000);
      a!.buffer.fill(1);
      b!.buffer.fill(2);
      expect(a!.buffer.every((x) => x === 1)).toBe(true);
      expect(b!.buffer.every((x) => x === 2)).toBe(true);
      pool.release(a!);
      pool.release(b!);
      pool.close();
    });

    it("turns an overrun into an error naming the slot, on release", () => {
      const pool = new ArenaPool({ slotSize: 48, memory });
      const slots = allocN(pool, 8);
      overrun(slots[6]!);
      let error: unknown;
      try {
        pool.release(slots[6]!);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ArenaOverflow);
      expect(error).toMatchObject({
        kind: "overflow",
        id: 6,
        arena: 0,
        slot: 6,
        slotSize: 48,
        operation: "release",
        code: "ERR_BOBBIN_ARENA_OVERFLOW",
      });
      expect((error as Error).message).toMatch(/slot 6 of arena 0/);
      expect(pool.stats().inUse).toBe(7); // still freed
      pool.release(slots[5]!); // neighbours are fine
      pool.close();
    });

    it("checks the slot before a native write lands in it", () => {
      const pool = new ArenaPool({ slotSize: 32, memory });
      const [r, w] = pipe();
      try {
        const slot = pool.alloc()!;
        syscalls.write(w, Buffer.from("hello"));
        expect(syscalls.read(r, slot.buffer)).toBe(5);
        expect(slot.buffer.subarray(0, 5).toString()).toBe("hello");

        // A read asked to cross the slot's end is refused before anything is written.
        const wide = new Uint8Array(slot.buffer.buffer, slot.buffer.byteOffset, 40);
        syscalls.write(w, Buffer.from("world"));
        expect(() => syscalls.read(r, wide)).toThrow(expect.objectContaining({ kind: "out-of-bounds", slot: 0, operation: "read" }));

        // An overrun done by someone else is found before the kernel writes more.
        overrun(slot);
        expect(() => syscalls.read(r, slot.buffer)).toThrow(ArenaOverflow);
        expect(() => pool.release(slot)).toThrow(ArenaOverflow);

        // A released slot's buffer is not a place to read into.
        const again = pool.alloc()!;
        pool.release(again);
        expect(() => syscalls.read(r, again.buffer)).toThrow(SlotNotAllocated);
        expect(syscalls.read(r, Buffer.alloc(8))).toBe(5); // "world" stayed in the pipe
      } finally {
        syscalls.close(r);
        syscalls.close(w);
        pool.close();
      }
    });

    it("refuses a double release", () => {
      const pool = new ArenaPool({ slotSize: 16, memory });
      const s = pool.alloc()!;
      pool.release(s);
      expect(() => pool.release(s)).toThrow(SlotNotAllocated);
      const t = pool.alloc()!; // same id, new owner
      expect(t.id).toBe(s.id);
      expect(() => pool.release(s)).toThrow(TypeError);
      pool.release(t);
      expect(() => pool.release({ id: 0 } as Slot)).toThrow(TypeError);
      pool.close();
    });

    it("keeps one empty arena online and gives the others back", () => {
      const pool = new ArenaPool({ slotSize: 16384, memory });
      const slots = allocN(pool, 64 * 3);
      for (const s of slots) s.buffer.fill(7); // touch every page
      const full = pool.residentBytes();
      expect(full).toBeGreaterThanOrEqual(3 * 64 * 16384);
      for (const s of slots) pool.release(s);
      expect(pool.stats()).toMatchObject({ arenas: 3, online: 1, inUse: 0 });
      // Offline arenas come back (as zeroes, with fresh canaries).
      const again = allocN(pool, 64 * 3);
      expect(pool.stats()).toMatchObject({ arenas: 3, online: 3, inUse: 192 });
      for (const s of again) pool.release(s);
      pool.close();
    });

    // MADV_DONTNEED takes the pages at once; the BSDs' MADV_FREE only when memory runs short.
    it.skipIf(process.platform !== "linux")(
      `the pages of offline arenas leave RAM at once${process.platform === "linux" ? "" : ` (skipped: MADV_FREE on ${process.platform} frees them only under memory pressure)`}`,
      () => {
        const pool = new ArenaPool({ slotSize: 16384, memory });
        const slots = allocN(pool, 64 * 3);
        for (const s of slots) s.buffer.fill(7);
        for (const s of slots) pool.release(s);
        expect(pool.residentBytes()).toBeLessThanOrEqual(pool.stats().arenaBytes + 4096);
        pool.close();
      },
    );

    it("returns null at the cap", () => {
      const pool = new ArenaPool({ slotSize: 1024, maxBytes: 70 * 1024 * 1.1, memory }); // one arena
      const slots = allocN(pool, 64);
      expect(pool.alloc()).toBeNull();
      pool.release(slots[0]!);
      expect(pool.alloc()!.id).toBe(0);
      pool.close();
    });
  });
}

describe("ArenaPool: back-pressure", () => {
  it("acquire() waits at the cap and gets the next released slot", async () => {
    const pool = new ArenaPool({ slotSize: 64, maxBytes: 1 });
    const order = await B.run(function* () {
      const log: string[] = [];
      const held = [] as Slot[];
      for (let i = 0; i < 64; i++) held.push(yield* pool.acquire());
      const waiter = B.spawn(function* () {
        const s = yield* pool.acquire();
        log.push(`got ${s.id}`);
        pool.release(s);
      });
      yield* B.yieldNow();
      log.push(`waiting ${pool.stats().waiting}`);
      pool.release(held[9]!);
      yield* B.awaitExn(waiter);
      for (const s of held) if (s !== held[9]) pool.release(s);
      return log;
    });
    expect(order).toEqual(["waiting 1", "got 9"]);
    expect(pool.stats().inUse).toBe(0);
    pool.close();
  });

  it("a cancelled waiter leaves the queue and takes no slot", async () => {
    const pool = new ArenaPool({ slotSize: 64, maxBytes: 1 });
    await B.run(function* () {
      const held = [] as Slot[];
      for (let i = 0; i < 64; i++) held.push(pool.alloc()!);
      const waiter = B.spawn(function* () {
        yield* pool.acquire();
      });
      yield* B.yieldNow();
      expect(pool.stats().waiting).toBe(1);
      yield* B.cancel(waiter);
      expect(pool.stats().waiting).toBe(0);
      for (const s of held) pool.release(s);
    });
    expect(pool.stats().inUse).toBe(0);
    pool.close();
  });

  it("release checks the canary before handing a slot to a waiter", async () => {
    const pool = new ArenaPool({ slotSize: 64, maxBytes: 1 });
    await B.run(function* () {
      const held = [] as Slot[];
      for (let i = 0; i < 64; i++) held.push(pool.alloc()!);
      const waiter = B.spawn(function* () {
        return yield* pool.acquire();
      });
      yield* B.yieldNow();
      overrun(held[0]!);
      expect(() => pool.release(held[0]!)).toThrow(ArenaOverflow); // freed, not handed over
      expect(pool.stats()).toMatchObject({ waiting: 1, inUse: 63 });
      pool.release(held[1]!);
      const handed = yield* B.awaitExn(waiter);
      expect(handed.id).toBe(1);
      pool.release(handed);
      for (const s of held.slice(2)) pool.release(s);
    });
    pool.close();
  });
});

describe("ArenaPool: options", () => {
  it("validates them", () => {
    expect(() => new ArenaPool({ slotSize: 0 })).toThrow(RangeError);
    expect(() => new ArenaPool({ slotSize: 1.5 })).toThrow(RangeError);
    expect(() => new ArenaPool({ maxBytes: -1 })).toThrow(RangeError);
    expect(() => new ArenaPool({ memory: "disk" as never })).toThrow(RangeError);
  });

  it("uses mmap memory by default where external buffers are allowed", () => {
    const pool = new ArenaPool();
    expect(pool.memory).toBe("mmap");
    expect(pool.slotSize).toBe(16384);
    pool.close();
    expect(() => pool.alloc()).toThrow(expect.objectContaining({ code: "ERR_BOBBIN_POOL_CLOSED" }));
  });
});
