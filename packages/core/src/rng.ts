/**
 * @internal A small seedable generator (splitmix32) for every random choice of a run:
 * `awaitFirst` ties, `awaitOne` ties and domain placement. One seed replays a
 * schedule.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed | 0;
  }

  /** A uniformly distributed integer in `[0, bound)`. */
  below(bound: number): number {
    this.state = (this.state + 0x9e3779b9) | 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    z = (z ^ (z >>> 15)) >>> 0;
    return z % bound;
  }
}
