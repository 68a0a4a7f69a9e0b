/**
 * @internal
 * The shared mutex's protocol across domains (the local side is `../mutex.ts`).
 *
 * Header: `LOCK` is 1 while some task of some domain holds the lock (or it is
 * on its way to a domain it was handed to), 0 when free; `HOLDER_DOMAIN` and
 * `HOLDER_TASK` say who holds it, for errors (-1 while it changes hands).
 * Slot of a thread with waiters: a request with a ticket (`ticket.ts`),
 * `STATE` = `WANT` until the unlocker that hands it the lock makes it
 * `GRANTED`; domains are served oldest ticket first.
 *
 * Only the domain holding the lock hands it on, so hand-offs never race with
 * each other; they race only with a domain withdrawing its slot, and the
 * compare-and-swap on `STATE` settles which came first. When nobody waits, the
 * holder stores `LOCK` = 0 and then looks at the slots again, while a new
 * waiter publishes `WANT` and then looks at `LOCK` again: one of them sees the
 * other.
 */
import { Domain } from "@bobbin/core";
import { kind, OWN } from "./layout.js";
import { GRANTED, NONE, TicketAgent, WIDTH } from "./ticket.js";

/** @internal The shared mutex's kind. */
export const MUTEX = kind("Mutex", WIDTH);
/** @internal Header word: 1 while the lock is held (or handed over), 0 when free. */
export const LOCK = OWN;
/** @internal Header word: the holder's domain; -1 while the lock changes hands. */
export const HOLDER_DOMAIN = OWN + 1;
/** @internal Header word: the holder's task uid (in its domain). */
export const HOLDER_TASK = OWN + 2;
/** @internal `STATE` of a domain asking for the lock. */
export const WANT = 1;

/** @internal What a shared lock needs of its mutex: hand the lock to a task of this domain. */
export interface LocalHolders {
  serveLocal(): void;
}

/** @internal This domain's side of a shared mutex. */
export class SharedLock extends TicketAgent {
  /** This thread's domain (made in a task, or on dom0 before any run). */
  private readonly domain = Domain.self();

  constructor(
    id: string,
    cells: Int32Array,
    private readonly mutex: LocalHolders,
  ) {
    super(id, cells, MUTEX);
  }

  get isLocked(): boolean {
    return Atomics.load(this.cells, LOCK) !== 0;
  }

  /** Who holds the lock, as far as the shared memory says. */
  holderOf(): { domain: number; task: number } | null {
    const domain = Atomics.load(this.cells, HOLDER_DOMAIN);
    return domain < 0 ? null : { domain, task: Atomics.load(this.cells, HOLDER_TASK) };
  }

  /** Takes the lock if it is free. */
  tryAcquire(): boolean {
    return Atomics.load(this.cells, LOCK) === 0 && Atomics.compareExchange(this.cells, LOCK, 0, 1) === 0;
  }

  setHolder(task: number): void {
    Atomics.store(this.cells, HOLDER_TASK, task);
    Atomics.store(this.cells, HOLDER_DOMAIN, this.domain);
  }

  /**
   * The first local waiter is about to queue and this domain does not hold
   * the lock: ask the other domains for it. True when it was free after all:
   * this domain holds it now.
   */
  want(): boolean {
    this.wanting = true;
    return this.claim() && this.ask();
  }

  private ask(): boolean {
    this.takeTicket();
    Atomics.store(this.cells, this.state(), WANT);
    if (this.tryAcquire()) {
      this.stopAsking();
      return true;
    }
    this.arm(this.state(), WANT);
    return false;
  }

  /** The last local waiter left. True when the lock had been handed here meanwhile: this domain holds it now. */
  withdraw(): boolean {
    if (!this.wanting) return false;
    if (this.slot < 0) {
      this.wanting = false; // it was still waiting for a slot
      return false;
    }
    const was = Atomics.compareExchange(this.cells, this.state(), WANT, NONE);
    this.stopAsking();
    return was === GRANTED;
  }

  /** Hands the lock to the domain that has waited longest; false when none waits. */
  grantNext(): boolean {
    const cells = this.cells;
    for (;;) {
      const best = this.oldestAsking(this.slot);
      if (best < 0) return false;
      Atomics.store(cells, HOLDER_DOMAIN, -1);
      const state = this.state(best);
      if (Atomics.compareExchange(cells, state, WANT, GRANTED) === WANT) {
        Atomics.notify(cells, state);
        return true;
      }
      // That domain withdrew meanwhile: look again.
    }
  }

  /** No task of this domain wants the lock it holds: hand it to another domain, or free it. */
  release(): void {
    const cells = this.cells;
    for (;;) {
      if (this.grantNext()) return;
      Atomics.store(cells, HOLDER_DOMAIN, -1);
      Atomics.store(cells, LOCK, 0);
      // A domain may have asked after the scan, and seen LOCK still taken.
      if (this.oldestAsking(this.slot) < 0 || Atomics.compareExchange(cells, LOCK, 0, 1) !== 0) return;
    }
  }

  protected woken(): void {
    if (!this.wanting || this.slot < 0) return;
    const s = Atomics.load(this.cells, this.state());
    if (s === GRANTED) {
      this.stopAsking();
      this.mutex.serveLocal();
    } else if (s === WANT) this.arm(this.state(), WANT);
  }

  protected slotFreed(): void {
    if (this.wanting && this.slot < 0 && this.claim() && this.ask()) this.mutex.serveLocal();
  }
}
