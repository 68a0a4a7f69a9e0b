/**
 * `readSlot`: reads of the native backend into slots of its arena pool, so
 * that a task waiting for data holds no buffer.
 */
import type * as B from "@bobbin/core";
import { type Socket, SocketClosed } from "@bobbin/unix";
import type { Slot } from "../arena.js";
import { EpollBackend } from "./backend.js";
import { readSlotOp } from "./slot-read.js";
import type { NativeSocket } from "./socket.js";

/**
 * Reads from a connected stream socket of the native backend into a slot of
 * the backend's arena pool: the task holds no buffer while it waits for data
 * (a slot is taken only once the socket is readable, waiting for one at the
 * pool's memory cap), and the slot's bytes are the first `slot.length`.
 * Returns `null` at the end of the stream. Release the slot with
 * `backend.pool.release(slot)` (or {@link releaseSlot}) when done with it.
 *
 * @example
 * ```ts
 * for (let slot; (slot = yield* readSlot(sock)) !== null; ) {
 *   try {
 *     yield* write(sock, slot.buffer, 0, slot.length);
 *   } finally {
 *     releaseSlot(slot);
 *   }
 * }
 * ```
 * @throws TypeError when `sock` is not a connected stream socket of a native backend.
 * @throws SocketClosed, Node-style system errors, Cancelled and Timeout, as `read`.
 */
export function readSlot(sock: Socket): B.Operation<Slot | null> {
  const s = sock as NativeSocket & { readonly backend: EpollBackend };
  if (!(s?.backend instanceof EpollBackend)) {
    throw new TypeError("readSlot(sock) needs a socket of the native backend (run(main, { backend: nativeBackend }))");
  }
  if (!s.isStream) throw new TypeError(`readSlot(sock) needs a stream socket; this one is ${s.kind}`);
  if (s.state === "closed") throw new SocketClosed("readSlot()");
  if (s.state !== "connected") throw new TypeError(`readSlot(sock) needs a connected socket; this one is ${s.state}`);
  return readSlotOp(s.backend.io, s, "readSlot");
}

/**
 * Gives a slot from {@link readSlot} back to its pool.
 *
 * @example
 * ```ts
 * releaseSlot(slot);
 * ```
 * @throws ArenaOverflow when something wrote past the end of the slot; SlotNotAllocated when released twice.
 */
export function releaseSlot(slot: Slot): void {
  slot.pool.release(slot);
}
