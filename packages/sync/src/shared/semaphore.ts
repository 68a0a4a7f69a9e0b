/**
 * @internal
 * The shared semaphore's protocol across domains (the local side is
 * `../semaphore.ts`).
 *
 * Header: `PERMITS`, the count; `WAITING`, how many slots ask for permits (a
 * newcomer takes permits directly only when it is 0, so nobody overtakes a
 * waiting domain). Slot of a thread with waiters: a request with a ticket
 * (`ticket.ts`), `STATE` = need + 1 while it asks for `need` permits (its
 * oldest waiter's), `GRANTED` once they were taken off the count for it.
 * Whoever adds permits or starts asking runs `dispatch`, which serves the
 * slots oldest first while the permits suffice for the oldest one. One domain
 * dispatches at a time: the others leave a note (`DIRTY`) and the dispatcher
 * goes round again, so nothing spins or waits.
 */
import { kind, OWN } from "./layout.js";
import { GRANTED, NONE, TicketAgent, WIDTH } from "./ticket.js";

/** @internal The shared semaphore's kind. */
export const SEMAPHORE = kind("Semaphore", WIDTH);
/** @internal Header word: the permits available. */
export const PERMITS = OWN;
/** @internal Header word: how many slots ask for permits. */
export const WAITING = OWN + 1;
/** Header word: 1 while a domain dispatches. */
const DISPATCH = OWN + 2;
/** Header word: set when a domain could not dispatch because another one was. */
const DIRTY = OWN + 3;
/** The most permits a shared semaphore counts (they live in an `Int32Array`). */
const MAX_SHARED = 2 ** 31 - 1;

/**
 * @internal Checks a count against what a shared semaphore can hold.
 * @throws RangeError when `n` is more than 2³¹ − 1.
 */
export function checkShared(n: number, name: string): void {
  if (n > MAX_SHARED) throw new RangeError(`${name}: a shared semaphore counts up to 2^31 - 1, got ${n}`);
}

/** @internal What shared permits need of their semaphore: hand `n` permits to tasks of this domain. */
export interface LocalTakers {
  distribute(n: number): void;
}

/** @internal This domain's side of a shared semaphore. */
export class SharedPermits extends TicketAgent {
  /** What this domain asks for: its oldest waiter's permits. */
  private need = 0;

  constructor(
    id: string,
    cells: Int32Array,
    private readonly semaphore: LocalTakers,
  ) {
    super(id, cells, SEMAPHORE);
  }

  get available(): number {
    return Atomics.load(this.cells, PERMITS);
  }

  /** Takes `n` permits if nobody waits for some, in any domain. */
  tryTake(n: number): boolean {
    const cells = this.cells;
    if (Atomics.load(cells, WAITING) !== 0) return false;
    for (let p = Atomics.load(cells, PERMITS); p >= n; ) {
      const was = Atomics.compareExchange(cells, PERMITS, p, p - n);
      if (was === p) return true;
      p = was;
    }
    return false;
  }

  /** The oldest local waiter needs `n` permits: ask for them. True when they were taken for it at once. */
  want(n: number): boolean {
    this.wanting = true;
    this.need = n;
    return this.claim() && this.ask(true);
  }

  private ask(newTicket: boolean): boolean {
    if (newTicket) this.takeTicket();
    Atomics.add(this.cells, WAITING, 1);
    Atomics.store(this.cells, this.state(), this.need + 1);
    this.dispatch();
    if (this.takeGrant()) return true;
    this.arm(this.state(), this.need + 1);
    return false;
  }

  /** Whether the permits asked for were granted (then this domain stops asking). */
  private takeGrant(): boolean {
    if (Atomics.compareExchange(this.cells, this.state(), GRANTED, NONE) !== GRANTED) return false;
    this.stopAsking();
    return true;
  }

  /**
   * The oldest local waiter left; `next` is what the new one needs (-1: none
   * left). Returns permits granted meanwhile, for the caller to hand out, or null.
   */
  reask(next: number): number | null {
    if (!this.wanting) return null;
    if (this.slot < 0) {
      // Still waiting for a slot.
      if (next < 0) this.wanting = false;
      else this.need = next;
      return null;
    }
    const cells = this.cells;
    if (Atomics.compareExchange(cells, this.state(), this.need + 1, NONE) === GRANTED) {
      this.stopAsking();
      return this.need;
    }
    Atomics.sub(cells, WAITING, 1);
    if (next >= 0) {
      // Same ticket: the domain keeps its place.
      this.need = next;
      return this.ask(false) ? next : null;
    }
    this.stopAsking();
    this.dispatch(); // it may have held up the domains behind it
    return null;
  }

  /** `release(n)`: adds `n` permits, and serves the waiters they satisfy. */
  give(n: number): void {
    this.giveBack(n);
    // Served this domain's own request: its waiters are woken now.
    if (this.wanting && this.slot >= 0 && this.takeGrant()) this.semaphore.distribute(this.need);
  }

  /** Adds `n` permits and serves the other domains. */
  giveBack(n: number): void {
    const cells = this.cells;
    for (let p = Atomics.load(cells, PERMITS); ; ) {
      if (p + n > MAX_SHARED) throw new RangeError(`Semaphore.release(${n}): a shared semaphore counts up to 2^31 - 1 (${p} available)`);
      const was = Atomics.compareExchange(cells, PERMITS, p, p + n);
      if (was === p) break;
      p = was;
    }
    if (Atomics.load(cells, WAITING) !== 0) this.dispatch();
  }

  /** Serves the asking slots oldest first while the permits suffice, one domain at a time. */
  private dispatch(): void {
    const cells = this.cells;
    for (;;) {
      if (Atomics.compareExchange(cells, DISPATCH, 0, 1) !== 0) {
        // Another domain dispatches: it will go round again.
        Atomics.store(cells, DIRTY, 1);
        if (Atomics.compareExchange(cells, DISPATCH, 0, 1) !== 0) return;
      }
      Atomics.store(cells, DIRTY, 0);
      this.serve();
      Atomics.store(cells, DISPATCH, 0);
      if (Atomics.load(cells, DIRTY) === 0) return;
    }
  }

  private serve(): void {
    const cells = this.cells;
    for (;;) {
      const best = this.oldestAsking(-1);
      if (best < 0) return;
      const state = this.state(best);
      const asked = Atomics.load(cells, state);
      if (asked <= 0) continue; // withdrawn since the scan
      const need = asked - 1;
      const p = Atomics.load(cells, PERMITS);
      if (p < need) return; // the oldest must be served first
      if (Atomics.compareExchange(cells, PERMITS, p, p - need) !== p) continue;
      if (Atomics.compareExchange(cells, state, asked, GRANTED) === asked) {
        Atomics.sub(cells, WAITING, 1);
        Atomics.notify(cells, state);
      } else Atomics.add(cells, PERMITS, need); // it stopped asking meanwhile
    }
  }

  protected woken(): void {
    if (!this.wanting || this.slot < 0) return;
    if (this.takeGrant()) {
      this.semaphore.distribute(this.need);
      return;
    }
    if (Atomics.load(this.cells, this.state()) > 0) this.arm(this.state(), this.need + 1);
  }

  protected slotFreed(): void {
    if (this.wanting && this.slot < 0 && this.claim() && this.ask(true)) this.semaphore.distribute(this.need);
  }
}
