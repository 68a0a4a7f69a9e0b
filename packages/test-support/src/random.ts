/** A seeded PRNG for tests that draw many cases. */

/**
 * mulberry32: numbers in [0, 1), the same for the same seed.
 * @example
 * ```ts
 * const random = prng(42);
 * const size = Math.floor(random() * 1024);
 * ```
 */
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
