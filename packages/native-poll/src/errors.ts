/**
 * The errors of the arena's slots.
 */
import { BobbinError } from "@bobbin/core";

/**
 * What went wrong with an arena slot: `ArenaOverflow.kind` is `"overflow"` or
 * `"out-of-bounds"`; `SlotNotAllocated` is the `"not-allocated"` case.
 *
 * @example
 * ```ts
 * const kind: ArenaErrorKind = e instanceof ArenaOverflow ? e.kind : "not-allocated";
 * ```
 * @throws never (a type).
 */
export type ArenaErrorKind = "overflow" | "out-of-bounds" | "not-allocated";

/**
 * Something wrote past the end of an arena slot: its canary was overwritten
 * (`kind: "overflow"`, found when the slot is released or before native code
 * writes into it), or a native write was asked to cross the slot's end
 * (`kind: "out-of-bounds"`, refused before anything was written). The message
 * and the properties name the slot.
 *
 * @example
 * ```ts
 * try { pool.release(slot); } catch (e) {
 *   if (e instanceof ArenaOverflow) console.error(`slot ${e.slot} of arena ${e.arena} was overrun`);
 * }
 * ```
 * @throws never (an error class: it is thrown, its constructor does not throw).
 */
export class ArenaOverflow extends BobbinError {
  /** Always `"ERR_BOBBIN_ARENA_OVERFLOW"`. */
  readonly code = "ERR_BOBBIN_ARENA_OVERFLOW";
  constructor(
    readonly kind: "overflow" | "out-of-bounds",
    /** The slot's id in its pool (`arena * 64 + slot`). */
    readonly id: number,
    readonly arena: number,
    readonly slot: number,
    readonly slotSize: number,
    /** What found it: `release`, `check`, `read`, `readv`, `recvfrom`. */
    readonly operation: string,
  ) {
    super(
      kind === "overflow"
        ? `arena buffer overflow: the canary after slot ${slot} of arena ${arena} (slot id ${id}, ${slotSize} bytes) ` +
            `was overwritten, found by ${operation}: something wrote past the end of that slot`
        : `${operation} into slot ${slot} of arena ${arena} (slot id ${id}, ${slotSize} bytes) would write past the end ` +
            "of the slot: nothing was written; pass a length that fits the slot",
    );
  }
}

/**
 * An arena slot was used after it was released: released twice, or a native
 * write targeted a slot that is free. The message and properties name it.
 *
 * @example
 * ```ts
 * pool.release(slot);
 * pool.release(slot);   // throws SlotNotAllocated
 * ```
 * @throws never (an error class: it is thrown, its constructor does not throw).
 */
export class SlotNotAllocated extends BobbinError {
  /** Always `"ERR_BOBBIN_SLOT_NOT_ALLOCATED"`. */
  readonly code = "ERR_BOBBIN_SLOT_NOT_ALLOCATED";
  constructor(
    readonly id: number,
    readonly arena: number,
    readonly slot: number,
    readonly operation: string,
  ) {
    super(
      `${operation}: slot ${slot} of arena ${arena} (slot id ${id}) is not allocated: ` +
        "it was released already; a slot's buffer must not be used after release()",
    );
  }
}

/** @internal The factory the addon calls to make slot errors. */
export function arenaErrorFactory(kind: string, id: number, arena: number, slot: number, slotSize: number, operation: string): Error {
  if (kind === "not-allocated") return new SlotNotAllocated(id, arena, slot, operation);
  return new ArenaOverflow(kind === "overflow" ? "overflow" : "out-of-bounds", id, arena, slot, slotSize, operation);
}
