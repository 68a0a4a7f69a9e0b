/**
 * @internal
 * The machinery of the shared (cross-domain) primitives: a SharedArrayBuffer
 * laid out as a header and a table of slots, and the per-thread agent that
 * waits on it with `Atomics.waitAsync`, so that no thread ever blocks.
 *
 * Each domain (thread) that uses a shared primitive has one local object for
 * it (the registry below makes decoding the same buffer twice in a thread give
 * the same object back), with the local FIFO queue of waiting tasks that the
 * local primitives have. Across threads, a thread that has tasks waiting takes
 * a slot in the table and publishes there what it waits for; whoever can
 * satisfy it (an unlocker, a releaser, a signaller) changes the slot with a
 * compare-and-swap and `Atomics.notify`s it. The thread's agent is woken
 * through `Atomics.waitAsync` on its slot, on its own event loop, and hands
 * what it got to its oldest waiting task through that task's `Trigger`. A
 * cancelled waiter leaves its local queue at once; when it was the last one,
 * the thread withdraws its slot with a compare-and-swap, and if something was
 * handed to it meanwhile, gives it back on the spot.
 *
 * Slots are taken only while a thread has waiters and given back when it has
 * none, so they are bounded by the threads waiting at the same moment, not by
 * the domains of a run. When every slot is taken, a thread waits (again with
 * `waitAsync`) for one to be given back.
 */

/** @internal Words of the header, common to every kind. */
export const KIND = 0;
/** @internal How many slots were ever in use (scans stop there). */
export const SPAN = 1;
/** @internal Bumped (and notified) whenever a slot is given back. */
export const FREED = 2;
/** @internal A ticket counter: the order in which threads started waiting. */
export const TICKET = 3;
/** @internal First header word free for the kind's own use (4..7). */
export const OWN = 4;
/** @internal Words before the slot table. */
export const HEADER = 8;
/** @internal Slots of the table: threads that can wait on one primitive at the same moment without queueing for a slot. */
export const SLOTS = 64;
/** @internal Every slot's first word: 0 when free, 1 when a thread has it. */
export const OWNER = 0;

/** @internal The kinds, checked when a buffer is decoded. */
export const MUTEX = 1;
/** @internal */ export const CONDITION = 2;
/** @internal */ export const SEMAPHORE = 3;

const NAMES = ["", "Mutex", "Condition", "Semaphore"];

/** @internal What a shared primitive sends to another domain. */
export interface SharedData {
  readonly id: string;
  readonly buffer: SharedArrayBuffer;
}

/** @internal A new, zeroed buffer for a primitive of `kind` with `width` words per slot. */
export function allocate(kind: number, width: number): SharedData {
  const buffer = new SharedArrayBuffer(4 * (HEADER + SLOTS * width));
  new Int32Array(buffer)[KIND] = kind;
  return { id: globalThis.crypto.randomUUID(), buffer };
}

/**
 * @internal The cells of a buffer that came from another domain.
 * @throws TypeError when it is not a buffer of a primitive of `kind`.
 */
export function cellsOf(data: unknown, kind: number, width: number): Int32Array {
  const d = data as Partial<SharedData> | null;
  if (
    d === null ||
    typeof d !== "object" ||
    typeof d.id !== "string" ||
    !(d.buffer instanceof SharedArrayBuffer) ||
    d.buffer.byteLength !== 4 * (HEADER + SLOTS * width)
  ) {
    throw new TypeError(`a shared ${NAMES[kind]} arrived from another domain in a form this version of @bobbin/sync does not know`);
  }
  const cells = new Int32Array(d.buffer);
  if (Atomics.load(cells, KIND) !== kind)
    throw new TypeError(`a shared ${NAMES[kind]} arrived with the memory of another kind of primitive`);
  return cells;
}

// -- one object per primitive per thread ------------------------------------

const live = new Map<string, WeakRef<object>>();
const forget = new FinalizationRegistry<string>((id) => {
  if (live.get(id)?.deref() === undefined) live.delete(id);
});

/** @internal This thread's object for the shared primitive `id`: the known one, or `make()`'s. */
export function adopt<T extends object>(id: string, make: () => T): T {
  const known = live.get(id)?.deref();
  if (known !== undefined) return known as T;
  const made = make();
  live.set(id, new WeakRef(made));
  forget.register(made, id);
  return made;
}

/** @internal Whether `a` comes before `b` (tickets wrap around). */
export function before(a: number, b: number): boolean {
  return ((a - b) | 0) < 0;
}

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

/**
 * @internal This thread's side of one shared primitive: its slot (while it
 * has one), and the one `waitAsync` it keeps armed on that slot.
 */
export abstract class Agent {
  /** The slot this thread has, or -1. */
  slot = -1;
  /** The word of the armed wait, in a token so that a stale wake-up is told apart. */
  private armed: { readonly word: number } | null = null;
  private waitingForSlot = false;

  constructor(
    readonly cells: Int32Array,
    readonly width: number,
  ) {}

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
