/** The chunked FIFO under the ready queue, a parent's children, groups' waiting lists and buffers. */
import { describe, expect, it } from "vitest";
import * as B from "../../src/index.js";
import { RunQueue } from "../../src/kernel/run-queue.js";
import * as L from "../../src/lowlevel/index.js";

describe("RunQueue", () => {
  it("keeps FIFO order across chunks, pushes and shifts interleaved", () => {
    const q = new RunQueue<number>(4);
    const expected: number[] = [];
    let next = 0;
    // Grow well past a chunk, drain part of it, grow again: every chunk boundary crossed both ways.
    for (const [pushes, shifts] of [
      [3, 1],
      [9, 5],
      [1, 6],
      [13, 2],
      [4, 16],
    ]) {
      for (let i = 0; i < pushes!; i++) {
        q.push(next);
        expected.push(next++);
      }
      for (let i = 0; i < shifts!; i++) expect(q.shift()).toBe(expected.shift());
      expect(q.size).toBe(expected.length);
      expect(q.items()).toEqual(expected);
    }
    expect(q.isEmpty()).toBe(true);
    expect(q.shift()).toBeUndefined();
    q.push(99);
    expect(q.items()).toEqual([99]);
  });

  it("ping-pongs at a chunk's end without losing an item", () => {
    const q = new RunQueue<string>(2);
    q.push("a");
    q.push("b");
    for (let i = 0; i < 11; i++) q.push(q.shift()!);
    expect(q.items()).toEqual(["b", "a"]);
  });
});

describe("a parent's children list", () => {
  it("keeps spawn order across chunks and compactions", async () => {
    // 300 children park; two of every three are woken and awaited (tombstones
    // among the living), then 300 more are spawned: the list, many chunks long,
    // is compacted as it grows. The parent then returns with children left, and
    // StillHasChildren names them in the order the list keeps.
    let left: number[] = [];
    const result = B.run(function* () {
      const gates: L.Trigger[] = [];
      const children: B.Task<void>[] = [];
      for (let i = 0; i < 300; i++) {
        const gate = new L.Trigger();
        gates.push(gate);
        children.push(B.spawn(parkOn, gate));
      }
      for (let i = 0; i < 300; i++) if (i % 3 !== 0) gates[i]!.signal();
      for (let i = 0; i < 300; i++) if (i % 3 !== 0) yield* B.awaitExn(children[i]!);
      for (let i = 0; i < 300; i++) children.push(B.spawn(parkOn, new L.Trigger()));
      left = children.filter((_, i) => i >= 300 || i % 3 === 0).map((t) => t.uid);
    });
    const error = await result.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(B.StillHasChildren);
    expect((error as B.StillHasChildren).children).toEqual(left);
    expect(left).toHaveLength(400);
  });
});

function* parkOn(gate: L.Trigger): Generator<B.Instruction, void, unknown> {
  yield* gate.wait();
}
