/**
 * Measures what code allocates: the bytes it adds to V8's young generation
 * (where every short-lived object is born), counted across the collections
 * that run meanwhile with `v8.GCProfiler`, which reports each collection's
 * heap before and after it. A window opens right after a full collection, so
 * nothing allocated before it is counted.
 */
import { GCProfiler, getHeapSpaceStatistics, type HeapSpaceInfo, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

const YOUNG = new Set(["new_space", "new_large_object_space"]);

function youngOf(spaces: readonly { spaceName: string; spaceUsedSize: number }[]): number {
  let used = 0;
  for (const s of spaces) if (YOUNG.has(s.spaceName)) used += s.spaceUsedSize;
  return used;
}

function youngNow(): number {
  return youngOf(getHeapSpaceStatistics().map((s: HeapSpaceInfo) => ({ spaceName: s.space_name, spaceUsedSize: s.space_used_size })));
}

/**
 * One measurement: `const w = new YoungAllocation();` … the code …
 * `w.stop()` returns the bytes the code allocated.
 */
export class YoungAllocation {
  private readonly profiler = new GCProfiler();
  private readonly before: number;

  constructor() {
    collect();
    this.profiler.start();
    this.before = youngNow();
  }

  stop(): number {
    const after = youngNow();
    const { statistics } = this.profiler.stop();
    // Between collections the young generation only grows; each collection
    // empties it (its survivors stay or move on), so the allocation is the sum
    // of the growths between them.
    let allocated = 0;
    let from = this.before;
    for (const gc of statistics) {
      allocated += youngOf(gc.beforeGC.heapSpaceStatistics) - from;
      from = youngOf(gc.afterGC.heapSpaceStatistics);
    }
    return allocated + after - from;
  }
}
