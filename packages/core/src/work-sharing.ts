/**
 * Work sharing between worker domains, after the ParaSail notes: a domain
 * keeps the parallel calls it has not started in a queue of its own and
 * shares some only when another domain says it is idle. The first time it
 * shares one call; each time an idle domain comes back for more (it took
 * what was shared) the amount doubles; when the queue runs dry the amount
 * starts again from one. Pinned calls are never shared, a call never moves
 * to the domain that made it (nor to dom0, which never runs them), and an
 * idle domain keeps the call it is about to start.
 */
import type { Message } from "./wire.js";

/** @internal */
export type CallMessage = Extract<Message, { kind: "call" }>;

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
  share(queue: CallMessage[], thief: number, keep: number): CallMessage[] {
    if (!this.enabled || queue.length <= keep) return [];
    if (this.shared) this.batch *= 2;
    const taken: CallMessage[] = [];
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

  /** The batch the next share would hand over (for tests and benchmarks). */
  get nextBatch(): number {
    return this.shared ? this.batch * 2 : this.batch;
  }
}
