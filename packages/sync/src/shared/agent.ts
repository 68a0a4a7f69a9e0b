/**
 * @internal
 * A thread's side of one shared primitive: the slot it takes in the shared
 * memory while it has waiters, and the one `Atomics.waitAsync` it keeps armed
 * on that slot, so that no thread ever blocks. The agent is woken on its own
 * event loop and hands what it got to its oldest waiting task through that
 * task's `Trigger`. When every slot is taken, it waits (again with
 * `waitAsync`) for one to be given back.
 */
import { FREED, HEADER, type Kind, OWNER, SLOTS, SPAN } from "./layout.js";

/** `Atomics.waitAsync` (Node ≥ 16; typed by TypeScript's ES2024 lib only). */
const atomics = Atomics as typeof Atomics & {
  waitAsync(
    cells: Int32Array,
    index: number,
    expected: number,
  ): { async: false; value: "not-equal" | "timed-out" } | { async: true; value: Promise<"ok" | "timed-out"> };
};

/** Calls `then` once `cells[index]` was notified, or soon if it no longer holds `expected`. Never blocks. */
function waitWord(cells: Int32Array, index: number, expected: number, then: () => void): void {
  const r = atomics.waitAsync(cells, index, expected);
  if (r.async) void r.value.then(then);
  else queueMicrotask(then);
}

/** @internal This thread's side of one shared primitive. */
export abstract class Agent {
  /** The slot this thread has, or -1. */
  slot = -1;
  /** Words per slot. */
  readonly width: number;
  /** The word of the armed wait, in a token so that a stale wake-up is told apart. */
  private armed: { readonly word: number } | null = null;
  private waitingForSlot = false;

  constructor(
    /** Names the primitive in every domain (see `portable.ts`). */
    readonly id: string,
    readonly cells: Int32Array,
    kind: Kind,
  ) {
    this.width = kind.width;
  }

  /** The first word of slot `i`. */
  base(i: number): number {
    return HEADER + i * this.width;
  }

  /** How many slots to scan. */
  span(): number {
    return Atomics.load(this.cells, SPAN);
  }

  /**
   * Takes a free slot, and says whether it did. When all are taken, it
   * returns false and `slotFreed()` is called once one is given back.
   */
  protected claim(): boolean {
    if (this.slot >= 0) return true;
    const cells = this.cells;
    const freed = Atomics.load(cells, FREED);
    for (let i = 0; i < SLOTS; i++) {
      if (Atomics.compareExchange(cells, this.base(i) + OWNER, 0, 1) !== 0) continue;
      this.slot = i;
      for (let s = Atomics.load(cells, SPAN); s <= i; s = Atomics.load(cells, SPAN)) {
        if (Atomics.compareExchange(cells, SPAN, s, i + 1) === s) break;
      }
      return true;
    }
    if (!this.waitingForSlot) {
      this.waitingForSlot = true;
      waitWord(cells, FREED, freed, () => {
        this.waitingForSlot = false;
        this.slotFreed();
      });
    }
    return false;
  }

  /** Gives the slot back; its other words must be zero again. */
  protected releaseSlot(): void {
    const slot = this.slot;
    if (slot < 0) return;
    this.disarm();
    this.slot = -1;
    Atomics.store(this.cells, this.base(slot) + OWNER, 0);
    Atomics.add(this.cells, FREED, 1);
    Atomics.notify(this.cells, FREED);
  }

  /** Arms the wait on word `word` of the table (nothing to do if it is armed already: a notify wakes it whatever the value). */
  protected arm(word: number, expected: number): void {
    if (this.armed !== null && this.armed.word === word) return;
    this.disarm();
    const token = { word };
    this.armed = token;
    waitWord(this.cells, word, expected, () => {
      if (this.armed === token) this.armed = null;
      this.woken();
    });
  }

  /** Releases the armed wait (only this thread waits on its slot's words). */
  protected disarm(): void {
    const armed = this.armed;
    if (armed === null) return;
    this.armed = null;
    Atomics.notify(this.cells, armed.word);
  }

  /** The armed wait returned: look at the slot again. Runs on the event loop, outside any task. */
  protected abstract woken(): void;

  /** A slot was given back while this thread waited for one. */
  protected abstract slotFreed(): void;
}
