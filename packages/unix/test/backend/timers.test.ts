import { handleCount } from "@bobbin/test-support";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Deadline, DeadlineHeap, Timers } from "../../src/backend/index.js";

const entry = (at: number, fire: () => void = () => {}): Deadline => ({ at, heapIndex: -1, fire });

/** The first of the entries (in push order) with the earliest deadline. */
const earliest = (model: Deadline[]): Deadline => {
  const at = Math.min(...model.map((x) => x.at));
  return model.find((x) => x.at === at)!;
};

describe("DeadlineHeap", () => {
  it("pops in deadline order, equal deadlines in push order, and removes any entry, like a sorted list", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(fc.record({ push: fc.integer({ min: 0, max: 5 }) }), fc.record({ remove: fc.nat() }), fc.constant({ pop: true })),
          {
            maxLength: 200,
          },
        ),
        (ops) => {
          const heap = new DeadlineHeap();
          let model: Deadline[] = [];
          for (const op of ops) {
            if ("push" in op) {
              const d = entry(op.push);
              heap.push(d);
              model.push(d);
            } else if ("remove" in op) {
              if (model.length === 0) continue;
              const d = model[op.remove % model.length]!;
              expect(heap.remove(d)).toBe(true);
              expect(heap.remove(d)).toBe(false);
              expect(d.heapIndex).toBe(-1);
              model = model.filter((x) => x !== d);
            } else {
              const d = heap.pop();
              if (model.length === 0) expect(d).toBeUndefined();
              else {
                expect(d).toBe(earliest(model));
                model = model.filter((x) => x !== d);
              }
            }
            expect(heap.size).toBe(model.length);
            if (model.length) expect(heap.peek()).toBe(earliest(model));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("refuses an entry that is already in a heap", () => {
    const heap = new DeadlineHeap();
    const d = entry(1);
    heap.push(d);
    expect(() => heap.push(d)).toThrow(TypeError);
    heap.clear();
    expect(d.heapIndex).toBe(-1);
    expect(heap.size).toBe(0);
  });
});

describe("Timers", () => {
  it("drives any number of deadlines with one Node timer, in order, never early", async () => {
    const timers = new Timers();
    const before = handleCount("Timeout");
    const fired: number[] = [];
    const t0 = performance.now();
    const late: number[] = [];
    for (const ms of [30, 10, 20, 10, 40]) {
      const at = t0 + ms;
      timers.add(
        entry(at, () => {
          fired.push(ms);
          late.push(performance.now() - at);
        }),
      );
    }
    expect(timers.armed).toBe(true);
    expect(handleCount("Timeout") - before).toBeLessThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 80));
    expect(fired).toEqual([10, 10, 20, 30, 40]);
    for (const l of late) expect(l).toBeGreaterThanOrEqual(0);
    expect(timers.armed).toBe(false);
    expect(handleCount("Timeout")).toBeLessThanOrEqual(before);
  });

  it("releases the Node timer when the last deadline is removed", () => {
    const timers = new Timers();
    const before = handleCount("Timeout");
    const a = entry(performance.now() + 10_000);
    const b = entry(performance.now() + 20_000);
    timers.add(a);
    timers.add(b);
    timers.remove(a);
    expect(timers.armed).toBe(true);
    timers.remove(b);
    expect(timers.armed).toBe(false);
    expect(handleCount("Timeout")).toBe(before);
  });

  it("holds a timer for a deadline at Infinity, and clear releases everything", () => {
    const timers = new Timers();
    const before = handleCount("Timeout");
    timers.add(entry(Infinity));
    expect(timers.armed).toBe(true);
    expect(handleCount("Timeout") - before).toBe(1);
    timers.clear();
    expect(timers.size).toBe(0);
    expect(handleCount("Timeout")).toBe(before);
  });
});
