/**
 * Arena buffers after Chip: fixed-size slots in arenas of 64, first-fit bitmap
 * (lowest free slot), the arena of the last release preferred, idle empty
 * arenas (all but the most recent) given back to the OS, a canary after every
 * slot, and back-pressure at a memory cap. The allocator itself is C++
 * (native/arena.cc); this is its JavaScript face.
 */
import type * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { loadAddon, type NativeArenaPoolHandle } from "./load.js";

/**
 * Options of {@link ArenaPool}.
 *
 * @example
 * ```ts
 * const options: ArenaPoolOptions = { slotSize: 4096, maxBytes: 64 << 20, memory: "auto" };
 * const pool = new ArenaPool(options);
 * ```
 * @throws never (a type; the constructor validates it).
 */
export interface ArenaPoolOptions {
  /** Bytes per slot (each `slot.buffer` has exactly this length). Default 16384. */
  readonly slotSize?: number | undefined;
  /**
   * Memory cap in bytes (rounded down to whole arenas, at least one arena).
   * When every slot under the cap is taken, `alloc()` returns `null` and
   * `acquire()` waits for a release. Default: no cap.
   */
  readonly maxBytes?: number | undefined;
  /**
   * Where arenas live: `"mmap"` (anonymous mappings shown as external
   * ArrayBuffers; idle arenas are `madvise(MADV_DONTNEED)`ed), `"js"`
   * (ArrayBuffers owned by the JS engine, for runtimes that forbid external
   * buffers; idle arenas are let go for the GC), or `"auto"` (mmap when the
   * runtime allows external buffers). Default `"auto"`.
   */
  readonly memory?: "auto" | "mmap" | "js" | undefined;
}

/**
 * A snapshot of a pool, from {@link ArenaPool.stats}.
 *
 * @example
 * ```ts
 * const { inUse, online, arenas }: ArenaStats = pool.stats();
 * ```
 * @throws never (a type).
 */
export interface ArenaStats {
  readonly slotSize: number;
  /** Bytes from one slot's start to the next (slot + canary + alignment). */
  readonly stride: number;
  /** Bytes per arena (64 strides). */
  readonly arenaBytes: number;
  /** Arenas made so far (online or offline). */
  readonly arenas: number;
  /** Arenas whose memory is in use or kept (all but the offlined empty ones). */
  readonly online: number;
  /** Slots handed out. */
  readonly inUse: number;
  /** The cap in arenas (0: none). */
  readonly maxArenas: number;
  /** Tasks waiting in `acquire()`. */
  readonly waiting: number;
  readonly memory: "mmap" | "js";
}

const SLOTS = 64;

/**
 * One slot of an {@link ArenaPool}: a `Buffer` of exactly `slotSize` bytes that
 * belongs to the caller until {@link ArenaPool.release}. Do not use it after
 * releasing it. Made only by the pool (`alloc`, `acquire`, `readSlot`).
 *
 * @example
 * ```ts
 * const slot = pool.alloc()!;
 * slot.buffer.write("hello");
 * console.log(`slot ${slot.index} of arena ${slot.arena}`);
 * pool.release(slot);
 * ```
 * @throws never.
 */
export class Slot {
  /** @internal */ released = false;
  /** How many of its bytes hold data, for producers that fill it (`readSlot` sets it); 0 otherwise. */
  length = 0;
  /** @internal */
  constructor(
    /** The pool it came from. */
    readonly pool: ArenaPool,
    /** Its id in the pool: `arena * 64 + index`. */
    readonly id: number,
    /** Its bytes (`slotSize` long). */
    readonly buffer: Buffer,
  ) {}

  /** The arena it lives in. */
  get arena(): number {
    return Math.floor(this.id / SLOTS);
  }

  /** Its index within the arena (0 … 63). */
  get index(): number {
    return this.id % SLOTS;
  }
}

interface Waiter {
  readonly trigger: L.Trigger;
  slot: Slot | null;
}

/**
 * A pool of fixed-size buffers in Chip-style arenas.
 *
 * @example
 * ```ts
 * import { ArenaPool } from "@bobbin/native-poll";
 * const pool = new ArenaPool({ slotSize: 4096, maxBytes: 64 << 20 });
 * const slot = yield* pool.acquire();      // waits when 64 MiB are in use
 * try {
 *   const n = yield* read(sock, slot.buffer);
 * } finally {
 *   pool.release(slot);                    // checks the slot's canary
 * }
 * ```
 * @throws NativeUnavailable (from the constructor) when the addon is not built.
 */
export class ArenaPool {
  /** Bytes per slot. */
  readonly slotSize: number;
  /** `"mmap"` or `"js"`: where the arenas live. */
  readonly memory: "mmap" | "js";
  private readonly native: NativeArenaPoolHandle;
  private readonly stride: number;
  /** Per arena: the ArrayBuffer and the slot views made so far. */
  private readonly arenas: (ArrayBuffer | undefined)[] = [];
  private readonly views: (Buffer | undefined)[][] = [];
  private readonly waiters: Waiter[] = [];
  private waiterHead = 0;
  private closed = false;

  /**
   * @throws RangeError for a slot size outside 1 … 64 MiB or a negative/NaN cap.
   * @throws Error when `memory: "mmap"` is asked for where external buffers are not allowed.
   * @throws NativeUnavailable when the addon is not built.
   */
  constructor(options: ArenaPoolOptions = {}) {
    const slotSize = options.slotSize ?? 16384;
    if (!Number.isInteger(slotSize) || slotSize < 1 || slotSize > 64 * 1024 * 1024) {
      throw new RangeError(`new ArenaPool({ slotSize }): an integer in 1 … 67108864 bytes, got ${L.describe(slotSize)}`);
    }
    const maxBytes = options.maxBytes ?? Infinity;
    if (typeof maxBytes !== "number" || Number.isNaN(maxBytes) || maxBytes <= 0) {
      throw new RangeError(`new ArenaPool({ maxBytes }): a number of bytes > 0, got ${L.describe(maxBytes)}`);
    }
    const memory = options.memory ?? "auto";
    const mode = memory === "auto" ? 0 : memory === "mmap" ? 1 : memory === "js" ? 2 : -1;
    if (mode < 0) throw new RangeError(`new ArenaPool({ memory }): "auto", "mmap" or "js", got ${L.describe(memory)}`);
    const native = loadAddon();
    // The cap counts whole arenas, sized as the addon sizes them.
    const stride = strideFor(slotSize);
    const arenaBytes = stride * SLOTS;
    const maxArenas = maxBytes === Infinity ? 0 : Math.max(1, Math.min(2 ** 25, Math.floor(maxBytes / arenaBytes)));
    this.native = new native.NativeArenaPool(slotSize, maxArenas, mode);
    const stats = this.native.stats();
    this.slotSize = slotSize;
    this.stride = stats.stride;
    this.memory = stats.memory;
  }

  /**
   * A free slot now, or `null` when every slot under the cap is taken.
   *
   * @example
   * ```ts
   * const slot = pool.alloc();
   * if (slot === null) console.log("pool exhausted");
   * ```
   * @throws Error with `code` `ENOMEM` when the OS refuses more memory.
   * @throws Error with `code` `ERR_BOBBIN_POOL_CLOSED` after {@link close}.
   */
  alloc(): Slot | null {
    let r = this.live().alloc();
    if (r < 0) {
      if (r === -1) return null;
      if (r === -2) {
        const error = new Error("ArenaPool.alloc: the system refused memory for a new arena") as NodeJS.ErrnoException;
        error.code = "ENOMEM";
        throw error;
      }
      r = -3 - r; // the arena's memory is new: forget the old views
      const a = Math.floor(r / SLOTS);
      this.arenas[a] = this.native.arenaBuffer(a);
      this.views[a] = [];
    }
    return new Slot(this, r, this.view(r));
  }

  /**
   * A slot, waiting (back-pressure) while every slot under the cap is taken:
   * the next release hands its slot straight to the longest waiter.
   *
   * @example
   * ```ts
   * const slot = yield* pool.acquire();
   * ```
   * @throws Cancelled when the task is cancelled while waiting (no slot is taken).
   * @throws Error with `code` `ENOMEM` / `ERR_BOBBIN_POOL_CLOSED`, as {@link alloc}.
   */
  acquire(): B.Operation<Slot> {
    return acquireOp(this);
  }

  /**
   * Gives a slot back. Its canary is checked first: an overrun slot is still
   * freed, then reported.
   *
   * @example
   * ```ts
   * pool.release(slot);
   * ```
   * @throws ArenaOverflow when something wrote past the end of the slot (the error names it).
   * @throws SlotNotAllocated when the slot was released already.
   * @throws TypeError when the slot belongs to another pool.
   */
  release(slot: Slot): void {
    if (!(slot instanceof Slot) || slot.pool !== this) {
      throw new TypeError("ArenaPool.release(slot): the slot must come from this pool's alloc() or acquire()");
    }
    const native = this.live();
    if (slot.released) {
      // Let the addon name the slot (or find it allocated again by someone else).
      native.check(slot.id);
      throw new TypeError(`ArenaPool.release(slot): slot ${slot.id} was released already and belongs to someone else now`);
    }
    slot.released = true;
    if (this.waiterHead < this.waiters.length) {
      // Hand the slot over only with an intact canary; an overrun slot is
      // freed and reported by the native release below.
      let intact = true;
      try {
        native.check(slot.id);
      } catch {
        intact = false;
      }
      if (intact && this.handOff(slot.id)) return;
    }
    const offlined = native.release(slot.id);
    if (offlined >= 0 && this.memory === "js") {
      // The arena's ArrayBuffer is let go: drop our views so the GC can free it.
      this.arenas[offlined] = undefined;
      this.views[offlined] = [];
    }
  }

  /**
   * Checks a slot's canary without releasing it.
   *
   * @example
   * ```ts
   * pool.check(slot);
   * ```
   * @throws ArenaOverflow when something wrote past the end of the slot.
   * @throws SlotNotAllocated when the slot is not allocated.
   */
  check(slot: Slot): void {
    this.live().check(slot.id);
  }

  /**
   * Counters of the pool.
   *
   * @example
   * ```ts
   * const { inUse, arenas, online } = pool.stats();
   * ```
   * @throws never.
   */
  stats(): ArenaStats {
    const s = this.closed ? null : this.native.stats();
    return {
      slotSize: this.slotSize,
      stride: this.stride,
      arenaBytes: this.stride * SLOTS,
      arenas: s?.arenas ?? 0,
      online: s?.online ?? 0,
      inUse: s?.inUse ?? 0,
      maxArenas: s?.maxArenas ?? 0,
      waiting: this.waiters.length - this.waiterHead,
      memory: this.memory,
    };
  }

  /**
   * Bytes of arena memory resident in RAM now (by `mincore` for mmap arenas:
   * what was given back with `madvise` is not counted; for JS-owned arenas,
   * the size of the online ones).
   *
   * @example
   * ```ts
   * console.log(`${pool.residentBytes() >> 10} KiB resident`);
   * ```
   * @throws Error with `code` `ERR_BOBBIN_POOL_CLOSED` after {@link close}.
   */
  residentBytes(): number {
    return this.live().residentBytes();
  }

  /**
   * Lets go of every arena. Buffers still held stay valid memory (the GC frees
   * them with their last view) but no longer belong to the pool; waiters keep
   * waiting until cancelled.
   *
   * @example
   * ```ts
   * pool.close();
   * ```
   * @throws never.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.native.close();
    this.arenas.length = 0;
    this.views.length = 0;
  }

  /** @internal */
  enqueue(w: Waiter): void {
    this.waiters.push(w);
  }

  /** @internal A cancelled waiter leaves the queue. */
  dequeue(w: Waiter): void {
    const i = this.waiters.indexOf(w, this.waiterHead);
    if (i >= 0) this.waiters.splice(i, 1);
  }

  private handOff(id: number): boolean {
    const waiters = this.waiters;
    while (this.waiterHead < waiters.length) {
      const w = waiters[this.waiterHead]!;
      waiters[this.waiterHead++] = undefined as unknown as Waiter;
      if (this.waiterHead > 1024 && this.waiterHead * 2 > waiters.length) {
        waiters.splice(0, this.waiterHead);
        this.waiterHead = 0;
      }
      w.slot = new Slot(this, id, this.view(id));
      if (w.trigger.signal()) return true;
      w.slot = null; // its task was cancelled meanwhile
    }
    return false;
  }

  private view(id: number): Buffer {
    const a = Math.floor(id / SLOTS);
    const i = id % SLOTS;
    let views = this.views[a];
    if (views === undefined) views = this.views[a] = [];
    let v = views[i];
    if (v === undefined) {
      let ab = this.arenas[a];
      if (ab === undefined) ab = this.arenas[a] = this.native.arenaBuffer(a)!;
      v = views[i] = Buffer.from(ab, i * this.stride, this.slotSize);
    }
    return v;
  }

  private live(): NativeArenaPoolHandle {
    if (this.closed) {
      const error = new Error("the arena pool is closed") as NodeJS.ErrnoException;
      error.code = "ERR_BOBBIN_POOL_CLOSED";
      throw error;
    }
    return this.native;
  }
}

/** The addon's stride (arena.cc's StrideFor), to size the cap in arenas. */
function strideFor(slotSize: number): number {
  const align = slotSize >= 1024 ? 64 : 16;
  const roundUp = (n: number, to: number): number => Math.ceil(n / to) * to;
  return roundUp(roundUp(slotSize, 8) + 8, align);
}

function* acquireOp(pool: ArenaPool): Generator<B.Instruction, Slot, unknown> {
  const slot = pool.alloc();
  if (slot !== null) return slot;
  const w: Waiter = { trigger: new L.Trigger(), slot: null };
  pool.enqueue(w);
  try {
    yield* w.trigger.wait();
  } catch (error) {
    pool.dequeue(w);
    // Handed a slot just before the cancellation arrived: pass it on.
    if (w.slot !== null) pool.release(w.slot);
    throw error;
  }
  return w.slot!;
}
