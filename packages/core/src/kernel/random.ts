/**
 * The run's random source: every random choice of a run (`awaitOne` and
 * `awaitFirst` ties, `orphans` `get` ties, domain placement of `call`) goes
 * through one, so that one seed replays a schedule.
 */

/**
 * Where a run draws its random choices from: `run(main, { random })`. The
 * default is a splitmix32 generator seeded by `run`'s `seed`.
 *
 * @example
 * ```ts
 * const fixed: L.RandomSource = { below: () => 0 };   // always the first candidate
 * await B.run(main, { random: fixed });
 * ```
 */
export interface RandomSource {
  /** A uniformly distributed integer in `[0, bound)`; `bound` is a positive integer. */
  below(bound: number): number;
}

/** @internal splitmix32: small, fast, and good enough for scheduling choices. */
export class SplitMix32 implements RandomSource {
  private state: number;

  constructor(seed: number) {
    this.state = seed | 0;
  }

  below(bound: number): number {
    this.state = (this.state + 0x9e3779b9) | 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    z = (z ^ (z >>> 15)) >>> 0;
    return z % bound;
  }
}
