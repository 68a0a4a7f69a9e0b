/**
 * @internal
 * The shared condition's protocol across domains (the local side is
 * `../condition.ts`).
 *
 * Header: `CURSOR`, where the next `signal` starts looking (domains are taken
 * in turn). Slot of a thread with waiters: `AVAIL`, how many of its waiters no
 * signal has picked yet, and `TOKENS`, signals sent to it and not yet handed
 * to a waiter. A signaller takes one from some `AVAIL` (compare-and-swap),
 * adds a token to that slot and notifies it; the thread's agent hands each
 * token to its oldest waiter. The thread keeps, per slot, waiters = `AVAIL` +
 * tokens on their way − `debt`: a waiter cancelled when every waiter was
 * already picked owes a token, which it passes on at once (another signal),
 * and the token it was picked with is dropped when it arrives.
 */
import type { Queued, WaitQueue } from "../waiters.js";
import { Agent } from "./agent.js";
import { kind, OWN } from "./layout.js";

/** @internal Slot word: waiters of the slot's thread that no signal has picked yet. */
export const AVAIL = 1;
/** @internal Slot word: signals sent to the slot's thread, not yet handed to a waiter. */
export const TOKENS = 2;
/** @internal The shared condition's kind. */
export const CONDITION = kind("Condition", 3);
/** Header word: where the next `signal` starts looking. */
const CURSOR = OWN;

/** @internal A waiter of this domain, as the shared side sees it. */
export interface SignalWaiter extends Queued {
  /** Counted in this domain's slot, so that signals from other domains can reach it. */
  registered: boolean;
  /** Resumes it; false when it no longer waits. */
  wake(): boolean;
}

/** @internal This domain's side of a shared condition. */
export class SharedSignals extends Agent {
  /** Tokens to drop when they arrive (see above). */
  private debt = 0;

  constructor(
    id: string,
    cells: Int32Array,
    /** The condition's waiters of this domain. */
    private readonly queue: WaitQueue<SignalWaiter>,
  ) {
    super(id, cells, CONDITION);
  }

  /** A local waiter was just queued: count it in this domain's slot. */
  register(w: SignalWaiter): void {
    const had = this.slot >= 0;
    if (!this.claim()) return; // no slot: woken (spuriously) once one is free
    if (!had) this.wakeUnregistered(w);
    w.registered = true;
    Atomics.add(this.cells, this.base(this.slot) + AVAIL, 1);
    this.arm(this.base(this.slot) + TOKENS, 0);
  }

  /** A registered waiter left the queue without a token. */
  forget(): void {
    const avail = this.base(this.slot) + AVAIL;
    if (!takeOne(this.cells, avail)) {
      // Every waiter here was picked already: one of those tokens was for it.
      this.debt++;
      this.signal();
    }
    this.idle();
  }

  signal(): boolean {
    const cells = this.cells;
    const span = this.span();
    if (span === 0) return false;
    const start = (Atomics.add(cells, CURSOR, 1) >>> 0) % span;
    for (let k = 0; k < span; k++) {
      const i = (start + k) % span;
      if (takeOne(cells, this.base(i) + AVAIL)) {
        this.send(i, 1);
        return true;
      }
    }
    return false;
  }

  broadcast(): number {
    let woken = 0;
    for (let i = 0, span = this.span(); i < span; i++) {
      const n = Atomics.exchange(this.cells, this.base(i) + AVAIL, 0);
      if (n > 0) {
        woken += n;
        this.send(i, n);
      }
    }
    return woken;
  }

  private send(slot: number, n: number): void {
    if (slot === this.slot) {
      this.deliver(n); // this domain's waiters: woken now
      return;
    }
    const tokens = this.base(slot) + TOKENS;
    Atomics.add(this.cells, tokens, n);
    Atomics.notify(this.cells, tokens);
  }

  /** Hands `n` tokens to the oldest local waiters. */
  private deliver(n: number): void {
    const paid = Math.min(n, this.debt);
    this.debt -= paid;
    n -= paid;
    while (n > 0) {
      const w = this.queue.shift();
      if (w === null) break; // cannot happen: every token has its waiter
      if (w.wake()) n--;
      else if (!takeOne(this.cells, this.base(this.slot) + AVAIL)) {
        // Cancelled and detached before it could leave: it was one of the
        // picked ones, so this token goes to another waiter, anywhere.
        n--;
        this.signal();
      }
    }
    this.idle();
  }

  protected woken(): void {
    if (this.slot < 0) return;
    const n = Atomics.exchange(this.cells, this.base(this.slot) + TOKENS, 0);
    if (n > 0) this.deliver(n);
    if (this.slot >= 0) this.arm(this.base(this.slot) + TOKENS, 0);
  }

  protected slotFreed(): void {
    if (this.queue.size !== 0 && this.slot < 0 && this.claim()) this.wakeUnregistered(null);
  }

  /**
   * Waiters queued while this domain had no slot missed the signals sent
   * meanwhile: wake them (a spurious wake-up, which `wait` allows), they wait
   * again with the slot.
   */
  private wakeUnregistered(except: SignalWaiter | null): void {
    for (let w = this.queue.head; w !== null; ) {
      const next = w.after as SignalWaiter | null;
      if (w !== except && !w.registered) {
        this.queue.remove(w);
        w.wake();
      }
      w = next;
    }
    this.idle();
  }

  /** Gives the slot back once nothing here needs it. */
  private idle(): void {
    if (this.slot < 0 || this.debt !== 0) return;
    const base = this.base(this.slot);
    if (this.queue.size !== 0 || Atomics.load(this.cells, base + TOKENS) !== 0) return;
    this.releaseSlot();
  }
}

/** Decrements `cells[index]` if it is positive; whether it did. */
function takeOne(cells: Int32Array, index: number): boolean {
  for (let n = Atomics.load(cells, index); n > 0; ) {
    const was = Atomics.compareExchange(cells, index, n, n - 1);
    if (was === n) return true;
    n = was;
  }
  return false;
}
