/**
 * @internal
 * A request with a ticket: the slot layout that the shared mutex and the
 * shared semaphore have in common. A thread whose local tasks wait publishes
 * in its slot what it asks for (`STATE` > 0) and the ticket it took when it
 * started asking (`ORDER`); whoever can serve it picks the oldest ticket and
 * swaps `STATE` to `GRANTED` with a compare-and-swap, which settles the race
 * with a thread withdrawing its request (swapping `STATE` back to `NONE`).
 */
import { Agent } from "./agent.js";
import { before, TICKET } from "./layout.js";

/** @internal Slot word: `NONE`, what is asked for (> 0), or `GRANTED`. */
export const STATE = 1;
/** @internal Slot word: the ticket of the request (older is served first). */
export const ORDER = 2;
/** @internal Words of a slot: the owner word, `STATE` and `ORDER`. */
export const WIDTH = 3;
/** @internal `STATE`: asking for nothing. */
export const NONE = 0;
/** @internal `STATE`: the request was served; the slot's thread has what it asked for. */
export const GRANTED = -1;

/** @internal An agent whose slot holds a request with a ticket. */
export abstract class TicketAgent extends Agent {
  /** Whether this thread asks (its local tasks wait), with or without a slot yet. */
  protected wanting = false;

  /** The `STATE` word of slot `slot` (default: this thread's, which it must have). */
  protected state(slot: number = this.slot): number {
    return this.base(slot) + STATE;
  }

  /** Gives this thread's request the next ticket: it is served after every request already made. */
  protected takeTicket(): void {
    Atomics.store(this.cells, this.base(this.slot) + ORDER, Atomics.add(this.cells, TICKET, 1));
  }

  /** The request is over (served, or withdrawn): the slot goes back. */
  protected stopAsking(): void {
    Atomics.store(this.cells, this.state(), NONE);
    this.wanting = false;
    this.releaseSlot();
  }

  /** The slot of the oldest request but slot `except`'s (-1: none). */
  protected oldestAsking(except: number): number {
    const cells = this.cells;
    let best = -1;
    let order = 0;
    for (let i = 0, span = this.span(); i < span; i++) {
      if (i === except) continue;
      const base = this.base(i);
      if (Atomics.load(cells, base + STATE) <= 0) continue;
      const o = Atomics.load(cells, base + ORDER);
      if (best < 0 || before(o, order)) {
        best = i;
        order = o;
      }
    }
    return best;
  }
}
