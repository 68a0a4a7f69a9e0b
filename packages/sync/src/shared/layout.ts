/**
 * @internal
 * The memory of a shared (cross-domain) primitive: one SharedArrayBuffer of
 * 32-bit words, a header followed by a table of slots.
 *
 * Each domain (thread) that uses a shared primitive has one local object for
 * it, with the local FIFO queue of waiting tasks that the local primitives
 * have. Across threads, a thread that has tasks waiting takes a slot in the
 * table and publishes there what it waits for; whoever can satisfy it (an
 * unlocker, a releaser, a signaller) changes the slot with a compare-and-swap
 * and `Atomics.notify`s it (see `agent.ts` for the waiting side, and each
 * primitive's file here for the words of its header and slots).
 *
 * Slots are taken only while a thread has waiters and given back when it has
 * none, so they are bounded by the threads waiting at the same moment, not by
 * the domains of a run.
 */

/** @internal Header word: the kind of primitive, checked when a buffer is decoded. */
export const KIND = 0;
/** @internal Header word: how many slots were ever in use (scans stop there). */
export const SPAN = 1;
/** @internal Header word: bumped (and notified) whenever a slot is given back. */
export const FREED = 2;
/** @internal Header word: a ticket counter, the order in which threads started waiting. */
export const TICKET = 3;
/** @internal First header word free for the kind's own use (4..7). */
export const OWN = 4;
/** @internal Words before the slot table. */
export const HEADER = 8;
/** @internal Slots of the table: threads that can wait on one primitive at the same moment without queueing for a slot. */
export const SLOTS = 64;
/** @internal Every slot's first word: 0 when free, 1 when a thread has it. */
export const OWNER = 0;

/** @internal A kind of shared primitive: what its buffer is checked against. */
export interface Kind {
  /** The value of the `KIND` word. */
  readonly code: number;
  /** The primitive's class name, for messages. */
  readonly name: string;
  /** Words per slot, the owner word included. */
  readonly width: number;
}

/** The kinds, one code each. */
const CODES = { Mutex: 1, Condition: 2, Semaphore: 3 } as const;

/** @internal The kind `name`, whose slots have `width` words. */
export function kind(name: keyof typeof CODES, width: number): Kind {
  return { code: CODES[name], name, width };
}

/** @internal What a shared primitive sends to another domain. */
export interface SharedData {
  readonly id: string;
  readonly buffer: SharedArrayBuffer;
}

/** The size in bytes of a buffer of kind `k`. */
function byteLength(k: Kind): number {
  return 4 * (HEADER + SLOTS * k.width);
}

/** @internal A new, zeroed buffer for a primitive of kind `k`. */
export function allocate(k: Kind): SharedData {
  const buffer = new SharedArrayBuffer(byteLength(k));
  new Int32Array(buffer)[KIND] = k.code;
  return { id: globalThis.crypto.randomUUID(), buffer };
}

/**
 * @internal The cells of a buffer that came from another domain.
 * @throws TypeError when it is not a buffer of a primitive of kind `k`.
 */
export function cellsOf(data: unknown, k: Kind): Int32Array {
  const d = data as Partial<SharedData> | null;
  if (
    d === null ||
    typeof d !== "object" ||
    typeof d.id !== "string" ||
    !(d.buffer instanceof SharedArrayBuffer) ||
    d.buffer.byteLength !== byteLength(k)
  ) {
    throw new TypeError(`a shared ${k.name} arrived from another domain in a form this version of @bobbin/sync does not know`);
  }
  const cells = new Int32Array(d.buffer);
  if (Atomics.load(cells, KIND) !== k.code) throw new TypeError(`a shared ${k.name} arrived with the memory of another kind of primitive`);
  return cells;
}

/** @internal Whether ticket `a` comes before ticket `b` (tickets wrap around). */
export function before(a: number, b: number): boolean {
  return ((a - b) | 0) < 0;
}
