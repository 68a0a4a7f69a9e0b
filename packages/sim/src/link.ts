/**
 * A link: the path from one host to another, with its latency, its UDP loss
 * and reordering, and its faults (a partition, a hold). Each direction is a
 * link of its own; the faults of `Sim` cut or hold both.
 */
import { checkOptionNames } from "@bobbin/core/lowlevel";

/** @internal Where a latency's draw comes from. */
export interface Draws {
  float(): number;
}

/**
 * How long a packet takes over a link, in seconds: a fixed delay, a delay
 * drawn uniformly in `[min, max]`, or a function of a uniform draw in `[0, 1)`
 * from the world's generator (any distribution, still replayed by the seed).
 *
 * @example
 * ```ts
 * const fixed: Latency = 0.002;
 * const uniform: Latency = { min: 0.001, max: 0.01 };
 * const exponential: Latency = (u) => 0.001 - 0.005 * Math.log(1 - u);   // 1 ms + Exp(mean 5 ms)
 * ```
 */
export type Latency = number | { readonly min: number; readonly max: number } | ((u: number) => number);

/**
 * What a link does to the packets crossing it. Every choice is drawn from
 * the world's generator.
 *
 * @example
 * ```ts
 * sim.link("client", "server", { latency: { min: 0.001, max: 0.05 }, loss: 0.1, reorder: 0.05 });
 * ```
 */
export interface LinkOptions {
  /** The latency of each packet (TCP segments too, which still arrive in order). */
  readonly latency?: Latency | undefined;
  /** The probability that a UDP datagram is lost (0 to 1). TCP loses nothing. */
  readonly loss?: number | undefined;
  /** The probability that a UDP datagram is held back by one more latency, so later ones overtake it (0 to 1). */
  readonly reorder?: number | undefined;
}

/** @internal One direction of a connection: its packets arrive in the order they were sent. */
export interface Flow {
  /** When its last packet arrives (or arrived). */
  lastArrival: number;
}

/** @internal The default link: 0.5 to 2 ms, nothing lost or reordered. */
export const DEFAULT_LINK: Required<LinkOptions> = { latency: { min: 0.0005, max: 0.002 }, loss: 0, reorder: 0 };

/** @internal One direction between two hosts; `P` is what crosses it. */
export class Link<P = unknown> {
  latency: Latency;
  loss: number;
  reorder: number;
  /** Partitioned: UDP and SYNs are lost, TCP waits for the repair. */
  partitioned = false;
  /** Held: every packet waits for the release. */
  held = false;
  /** Packets waiting for a repair or a release, in the order they were sent. */
  readonly waiting: P[] = [];

  constructor(options: Required<LinkOptions>) {
    this.latency = options.latency;
    this.loss = options.loss;
    this.reorder = options.reorder;
  }

  /** Sets what `options` says. */
  configure(options: LinkOptions): void {
    if (options.latency !== undefined) this.latency = options.latency;
    if (options.loss !== undefined) this.loss = options.loss;
    if (options.reorder !== undefined) this.reorder = options.reorder;
  }

  /** Whether packets cannot cross now. */
  get blocked(): boolean {
    return this.partitioned || this.held;
  }

  /** A packet's delay, in milliseconds. */
  delay(random: Draws): number {
    return drawLatency(this.latency, random) * 1000;
  }
}

/** @internal A delay drawn from `latency`, in seconds. */
export function drawLatency(latency: Latency, random: Draws): number {
  if (typeof latency === "number") return latency;
  if (typeof latency === "function") return latency(random.float());
  return latency.min + (latency.max - latency.min) * random.float();
}

/** Every option of {@link LinkOptions}. */
const OPTION_NAMES: readonly (keyof LinkOptions)[] = ["latency", "loss", "reorder"];

/**
 * @internal Checks a link's options.
 * @throws TypeError / RangeError naming the bad option.
 */
export function checkLinkOptions(options: unknown, what: string): LinkOptions {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`${what} expects options { latency, loss, reorder }`);
  }
  const { latency, loss, reorder } = options as LinkOptions;
  checkOptionNames(what, options, OPTION_NAMES);
  if (latency !== undefined) checkLatency(latency, what);
  checkProbability(loss, "loss", what);
  checkProbability(reorder, "reorder", what);
  return options as LinkOptions;
}

function checkLatency(latency: unknown, what: string): void {
  if (typeof latency === "function") return;
  if (typeof latency === "number") {
    if (!(latency >= 0) || latency === Infinity) {
      throw new RangeError(`${what}: latency must be a finite number of seconds ≥ 0, got ${latency}`);
    }
    return;
  }
  const range = latency as { min?: unknown; max?: unknown } | null;
  if (
    range === null ||
    typeof range !== "object" ||
    typeof range.min !== "number" ||
    typeof range.max !== "number" ||
    !(range.min >= 0) ||
    !(range.max >= range.min) ||
    range.max === Infinity
  ) {
    throw new RangeError(`${what}: latency must be seconds ≥ 0, { min, max } with 0 ≤ min ≤ max, or a function (u) => seconds`);
  }
}

function checkProbability(p: unknown, name: string, what: string): void {
  if (p === undefined) return;
  if (typeof p !== "number" || !(p >= 0 && p <= 1))
    throw new RangeError(`${what}: ${name} must be a probability from 0 to 1, got ${String(p)}`);
}
