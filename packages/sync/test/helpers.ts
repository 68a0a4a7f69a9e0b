import * as B from "@bobbin/core";

/** Lets every other ready task run `n` times. */
export function* pause(n = 1): Generator<B.Instruction, void, unknown> {
  for (let i = 0; i < n; i++) yield* B.yieldNow();
}

/** Parks the current task until cancelled (a trigger nobody signals). */
export function* forever(): Generator<B.Instruction, never, unknown> {
  yield* new B.Trigger().wait();
  throw new Error("unreachable: nobody signals this trigger");
}

/** The error of a failed result, or a failure of the test. */
export function errorOf(r: B.Result<unknown>): unknown {
  if (r.ok) throw new Error(`expected a failure, got ${String(r.value)}`);
  return r.error;
}

/** A small deterministic PRNG (mulberry32) for the stress tests. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
