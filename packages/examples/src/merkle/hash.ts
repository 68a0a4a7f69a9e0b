/**
 * The parallel Merkle hash: CPU-bound work spread with `parallel` over the
 * worker domains, and the same hash on one domain to compare.
 */
import * as B from "@bobbin/core";
import { subtreeRoot } from "./tasks.js";
import { combine, rootOf, split } from "./tree.js";

/**
 * The root of `leaves` leaves of `leafSize` bytes, on the current domain.
 *
 * @example
 * ```ts
 * sequentialRoot(1 << 14, 1024).toString("hex");
 * ```
 */
export function sequentialRoot(leaves: number, leafSize: number): Buffer {
  return rootOf({ from: 0, count: leaves, leafSize });
}

/**
 * The same root, with its `parts` subtrees hashed in parallel
 * (`B.parallel`, round-robin over the worker domains; idle domains take
 * queued subtrees from busy ones), then combined here.
 *
 * @example
 * ```ts
 * const root = yield* parallelRoot(1 << 14, 1024, 8);
 * ```
 * @throws the first failure of a subtree; RangeError for sizes that are not powers of two.
 */
export function* parallelRoot(leaves: number, leafSize: number, parts: number): Generator<B.Instruction, Buffer, unknown> {
  const results = yield* B.parallel(subtreeRoot, split(leaves, parts, leafSize));
  const roots = results.map((r) => {
    if (!r.ok) throw r.error;
    return r.value;
  });
  return combine(roots);
}

/** What {@link compare} measured. */
export interface Comparison {
  readonly root: string;
  readonly sameRoot: boolean;
  readonly sequentialMs: number;
  readonly parallelMs: number;
  readonly domains: number;
  readonly parts: number;
}

/**
 * Hashes the tree on dom0, then in parallel over `domains` worker domains,
 * and compares roots and times. Workers are started (and warmed up) before
 * timing, so the parallel time is the hashing's.
 *
 * @example
 * ```ts
 * const c = await compare({ leaves: 1 << 16, leafSize: 1024, domains: 2 });
 * c.sameRoot;   // true
 * ```
 */
export async function compare(options: { leaves: number; leafSize: number; domains: number; parts?: number }): Promise<Comparison> {
  const { leaves, leafSize, domains } = options;
  let parts = options.parts ?? 1;
  if (options.parts === undefined) while (parts < domains * 4 && parts < leaves) parts *= 2;
  return B.run(
    function* () {
      // Start the workers and load the task module there before timing.
      const warmUp = Array.from({ length: domains }, () => ({ from: 0, count: 1, leafSize: 1 }));
      for (const r of yield* B.parallel(subtreeRoot, warmUp)) if (!r.ok) throw r.error;
      const t0 = performance.now();
      const sequential = sequentialRoot(leaves, leafSize);
      const t1 = performance.now();
      const parallel = yield* parallelRoot(leaves, leafSize, parts);
      const t2 = performance.now();
      return {
        root: parallel.toString("hex"),
        sameRoot: sequential.equals(parallel),
        sequentialMs: t1 - t0,
        parallelMs: t2 - t1,
        domains,
        parts,
      };
    },
    { domains },
  );
}
