import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { FREED, HEADER, SPAN } from "../src/shared/layout.js";

/** Lets every other ready task run `n` times. */
export function* pause(n = 1): Generator<B.Instruction, void, unknown> {
  for (let i = 0; i < n; i++) yield* B.yieldNow();
}

/** Parks the current task until cancelled (a trigger nobody signals). */
export function* forever(): Generator<B.Instruction, never, unknown> {
  yield* new L.Trigger().wait();
  throw new Error("unreachable: nobody signals this trigger");
}

/** Lets Node's loop run `ms` milliseconds: wake-ups from other domains (`Atomics.waitAsync`) arrive through it. */
export function sleep(ms = 1): B.Operation<void> {
  return B.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)));
}

/** Sleeps until `condition` holds; throws after 10 s (other domains are slow under load, not that slow). */
export function* until(condition: () => boolean): Generator<B.Instruction, void, unknown> {
  for (const deadline = Date.now() + 10_000; !condition(); yield* sleep()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the other domains");
  }
}

// Another domain's side of a shared primitive, played by hand (see src/shared/layout.ts).

/** The first word (the owner flag) of slot `i` of a table whose slots have `width` words. */
export function slot(i: number, width: number): number {
  return HEADER + i * width;
}

/** Another domain takes slot `i` of `cells` (as `claim` does); returns its first word. */
export function takeSlot(cells: Int32Array, i: number, width: number): number {
  const base = slot(i, width);
  Atomics.store(cells, base, 1);
  if (Atomics.load(cells, SPAN) <= i) Atomics.store(cells, SPAN, i + 1);
  return base;
}

/** Another domain gives slot `i` back (as `releaseSlot` does), its words zeroed. */
export function freeSlot(cells: Int32Array, i: number, width: number): void {
  for (let w = 1; w < width; w++) Atomics.store(cells, slot(i, width) + w, 0);
  Atomics.store(cells, slot(i, width), 0);
  Atomics.add(cells, FREED, 1);
  Atomics.notify(cells, FREED);
}

/** `n` zeroed 32-bit cells over a SharedArrayBuffer (for parallel tasks to share). */
export function sharedCells(n: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * n));
}
