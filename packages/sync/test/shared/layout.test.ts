/**
 * The memory of a shared primitive: buffers are made for one kind, and a
 * buffer that arrives from another domain is checked before it is used.
 */
import { describe, expect, it } from "vitest";
import { CONDITION } from "../../src/shared/condition.js";
import { allocate, before, cellsOf, HEADER, KIND, SLOTS } from "../../src/shared/layout.js";
import { MUTEX } from "../../src/shared/mutex.js";
import { SEMAPHORE } from "../../src/shared/semaphore.js";

describe("shared memory layout", () => {
  it("gives each kind its own code, and a buffer of a header and a slot table", () => {
    expect(new Set([MUTEX.code, CONDITION.code, SEMAPHORE.code]).size).toBe(3);
    const data = allocate(MUTEX);
    expect(data.buffer.byteLength).toBe(4 * (HEADER + SLOTS * MUTEX.width));
    expect(new Int32Array(data.buffer)[KIND]).toBe(MUTEX.code);
    expect(allocate(MUTEX).id).not.toBe(data.id);
  });

  it("accepts a buffer of the expected kind, and refuses others with a TypeError naming the kind", () => {
    const data = allocate(SEMAPHORE);
    expect(cellsOf(data, SEMAPHORE).buffer).toBe(data.buffer);
    // Same size, another kind: the KIND word tells them apart.
    expect(() => cellsOf(allocate(MUTEX), SEMAPHORE)).toThrow(/shared Semaphore arrived with the memory of another kind/);
    for (const bad of [null, 42, {}, { id: "x", buffer: new ArrayBuffer(4) }, { id: "x", buffer: new SharedArrayBuffer(8) }]) {
      expect(() => cellsOf(bad, CONDITION)).toThrow(TypeError);
    }
    expect(() => cellsOf({ buffer: data.buffer }, SEMAPHORE)).toThrow(/shared Semaphore arrived from another domain in a form/);
  });

  it("orders tickets across the wrap-around of the counter", () => {
    expect(before(1, 2)).toBe(true);
    expect(before(2, 1)).toBe(false);
    expect(before(2 ** 31 - 1, -(2 ** 31))).toBe(true); // the counter wrapped: the newer is "smaller"
  });
});
