import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { BoundedBuffer } from "./buffer.js";

const TOTAL = 10_000;

describe("bounded buffer: one Mutex, two Conditions", () => {
  it("two producers and two consumers deliver 10,000 items in order, each exactly once", async () => {
    const buffer = new BoundedBuffer<{ producer: number; seq: number }>(16);
    const received: { producer: number; seq: number }[][] = [[], []];
    await B.run(function* () {
      const producers = [0, 1].map((producer) =>
        B.spawn(function* () {
          for (let seq = 0; seq < TOTAL / 2; seq++) yield* buffer.put({ producer, seq });
        }),
      );
      const consumers = [0, 1].map((consumer) =>
        B.spawn(function* () {
          for (let k = 0; k < TOTAL / 2; k++) received[consumer]!.push(yield* buffer.take());
        }),
      );
      for (const r of yield* B.awaitAll([...producers, ...consumers])) expect(r.ok).toBe(true);
    });

    // The buffer is FIFO: items leave in the very order they came in.
    expect(buffer.takeLog).toEqual(buffer.putLog);
    expect(buffer.takeLog.length).toBe(TOTAL);
    // Each producer's items arrive in its order, and each is delivered exactly once.
    for (const producer of [0, 1]) {
      const seqs = buffer.takeLog.filter((i) => i.producer === producer).map((i) => i.seq);
      expect(seqs).toEqual(Array.from({ length: TOTAL / 2 }, (_, i) => i));
    }
    // Each consumer saw each producer's items in increasing order.
    for (const got of received) {
      for (const producer of [0, 1]) {
        const seqs = got.filter((i) => i.producer === producer).map((i) => i.seq);
        for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeGreaterThan(seqs[i - 1]!);
      }
    }
    expect(received[0]!.length + received[1]!.length).toBe(TOTAL);
    // Both consumers did some of the work; the capacity was respected and reached.
    expect(received[0]!.length).toBe(TOTAL / 2);
    expect(buffer.maxSize).toBe(16);
    expect(buffer.leftovers).toEqual({ items: 0, locked: false, waiters: 0 });
  });
});
