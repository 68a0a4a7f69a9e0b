/**
 * Work sharing between worker domains, after the ParaSail notes: a domain
 * keeps the parallel calls it has not started in a queue of its own and
 * shares some only when another domain says it is idle. The first time it
 * shares one call; each time an idle domain comes back for more (it took
 * what was shared) the amount doubles; when the queue runs dry the amount
 * starts again from one. Pinned calls are never shared, a call never moves
 * to the domain that made it (nor to dom0, which never runs them), and an
 * idle domain keeps the call it is about to start.
 *
 * Domains meet on a shared board (a SharedArrayBuffer): each raises an idle
 * flag while it has nothing to run and publishes how many calls it has
 * queued. A domain that queues work hands some to an idle domain whose flag
 * it could claim; a domain that becomes idle tells only the busiest domain
 * (one message, none when nobody has queued work). Claiming a flag with
 * compare-and-swap means a stale notice shares nothing and two busy domains
 * never both feed one idle domain.
 */
import type { Call } from "./wire.js";

/** @internal Idle flags and queue lengths of every domain, shared by all of them. */
export class SharingBoard {
  private readonly cells: Int32Array;

  constructor(
    readonly buffer: SharedArrayBuffer,
    private readonly domains: number,
  ) {
    this.cells = new Int32Array(buffer);
  }

  /** A board for dom0 and `workers` worker domains. */
  static create(workers: number): SharedArrayBuffer {
    return new SharedArrayBuffer(4 * 2 * (workers + 1));
  }

  setIdle(domain: number, idle: boolean): void {
    Atomics.store(this.cells, domain, idle ? 1 : 0);
  }

  /** Takes `domain`'s idle flag; false when it is not idle (any more). */
  claimIdle(domain: number): boolean {
    return Atomics.compareExchange(this.cells, domain, 1, 0) === 1;
  }

  setQueued(domain: number, calls: number): void {
    Atomics.store(this.cells, this.domains + domain, calls);
  }

  /** Worker domains other than `self` whose idle flag is up. */
  idleDomains(self: number): number[] {
    const idle: number[] = [];
    for (let d = 1; d < this.domains; d++) if (d !== self && Atomics.load(this.cells, d) === 1) idle.push(d);
    return idle;
  }

  /** The worker domain other than `self` with the most queued calls, or -1 when none has any. */
  busiest(self: number): number {
    let best = -1;
    let most = 0;
    for (let d = 1; d < this.domains; d++) {
      const queued = Atomics.load(this.cells, this.domains + d);
      if (d !== self && queued > most) {
        best = d;
        most = queued;
      }
    }
    return best;
  }
}

/** @internal */
export class SharingPolicy {
  /** How many calls the next share hands over. */
  private batch = 1;
  /** Whether something was shared since the queue was last empty. */
  private shared = false;

  constructor(readonly enabled: boolean) {}

  /**
   * Removes from `queue` the calls to hand to the idle domain `thief`: the
   * oldest shareable ones after the first `keep`, up to the current batch.
   */
  share(queue: Call[], thief: number, keep: number): Call[] {
    if (!this.enabled || queue.length <= keep) return [];
    if (this.shared) this.batch *= 2;
    const taken: Call[] = [];
    for (let i = keep; i < queue.length && taken.length < this.batch; ) {
      const call = queue[i]!;
      if (!call.pinned && call.from !== thief) {
        taken.push(call);
        queue.splice(i, 1);
      } else i++;
    }
    if (taken.length !== 0) this.shared = true;
    if (queue.length === 0) this.reset();
    return taken;
  }

  /** The queue ran dry: next time, share one call again. */
  reset(): void {
    this.batch = 1;
    this.shared = false;
  }
}
