/**
 * The world's one generator: every random choice of a simulation — which
 * ready task runs next, latencies, losses, `awaitFirst` ties, `Math.random`
 * inside the world — is drawn from it, so one seed replays everything.
 */
import type * as L from "@bobbin/core/lowlevel";

/**
 * xoshiro128**: 128 bits of state, a period of 2^128 − 1, and only 32-bit
 * integer arithmetic (`Math.imul`), so every process on every machine draws
 * the same numbers from the same seed.
 *
 * @internal
 */
export class WorldRandom implements L.RandomSource {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    // The state comes from the seed through splitmix32, so that close seeds
    // (1, 2, 3…) start far apart; a zero state would stay zero.
    const low = seed >>> 0;
    const high = Math.floor(seed / 2 ** 32) >>> 0;
    let s = (low ^ Math.imul(high, 0x85ebca6b)) | 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
      z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
      return (z ^ (z >>> 15)) | 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next() | 1;
  }

  /** 32 random bits, as an unsigned integer. */
  next32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** A uniformly distributed integer in `[0, bound)` (core's `RandomSource`). */
  below(bound: number): number {
    if (bound <= 1) return 0;
    // Rejection sampling: no bias towards small values for bounds that do not divide 2^32.
    const limit = 2 ** 32 - (2 ** 32 % bound);
    for (;;) {
      const x = this.next32();
      if (x < limit) return x % bound;
    }
  }

  /** A uniformly distributed number in `[0, 1)`, with 53 random bits. */
  float(): number {
    return this.bits53() / 2 ** 53;
  }

  /** 53 random bits, as an integer in `[0, 2^53)`: `float()` times 2^53. */
  bits53(): number {
    const high = this.next32() >>> 5;
    const low = this.next32() >>> 6;
    return high * 67108864 + low;
  }

  /** Whether an event of probability `p` happens (`p` in `[0, 1]`; 0 never draws). */
  chance(p: number): boolean {
    return p > 0 && (p >= 1 || this.float() < p);
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/**
 * The seed of run `index` of a `check` started from `seed`: runs spread over
 * the seed space, and each one is replayed from its own seed alone.
 *
 * @internal
 */
export function runSeed(seed: number, index: number): number {
  const mixed = new WorldRandom(seed + index * 0x9e3779b9);
  return mixed.next32() * 2 ** 21 + (mixed.next32() >>> 11);
}
