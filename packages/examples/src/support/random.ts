/**
 * A small seedable random generator (mulberry32), so that a run can be replayed.
 */

/** Random integers from a seed. */
export class Random {
  private state: number;

  /** `seed` defaults to a random one; read it back from {@link Random.seed}. */
  constructor(readonly seed: number = (Math.random() * 2 ** 32) >>> 0) {
    this.state = seed >>> 0;
  }

  /** A uniform integer in `[0, bound)` (OCaml's `Random.int bound`). */
  int(bound: number): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * bound);
  }
}
