/**
 * `readSlot`: reads of the native backend into slots of its arena pool, so
 * that a task waiting for data holds no buffer.
 */
import type * as B from "@bobbin/core";
import { type Socket, SocketClosed } from "@bobbin/unix";
import { checkTimeouts } from "@bobbin/unix/backend";
import type { Slot } from "../arena.js";
import { errnoException } from "../errno.js";
import { wouldBlock } from "../raw/io.js";
import { EpollBackend } from "./backend.js";
import { ReadableOp } from "./ops.js";
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
  const s = sock as NativeSocket;
  if (!(s?.backend instanceof EpollBackend)) {
    throw new TypeError("readSlot(sock) needs a socket of the native backend (run(main, { backend: nativeBackend }))");
  }
  if (!s.isStream) throw new TypeError(`readSlot(sock) needs a stream socket; this one is ${s.kind}`);
  if (s.state === "closed") throw new SocketClosed("readSlot()");
  if (s.state !== "connected") throw new TypeError(`readSlot(sock) needs a connected socket; this one is ${s.state}`);
  return readSlotOp(s);
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

function* readSlotOp(s: NativeSocket): Generator<B.Instruction, Slot | null, unknown> {
  const io = (s.backend as EpollBackend).io;
  const pool = io.pool;
  for (;;) {
    // Park without a slot until the socket is (maybe) readable, and behind a reader woken with bytes read ahead.
    if (s.delivered !== null || (!s.readable && !s.receiveShut)) yield* new ReadableOp(io, s, "readSlot");
    checkTimeouts();
    if (s.state === "closed") throw new SocketClosed("readSlot()");
    if (s.receiveShut) return null;
    const slot = pool.alloc() ?? (yield* pool.acquire()); // waits only at the cap
    if (s.delivered !== null) {
      pool.release(slot); // a reader was woken with bytes while this one waited for a slot: they go first
      continue;
    }
    let n: number;
    try {
      n = io.sys.read(s.fd, slot.buffer, 0, slot.buffer.length);
    } catch (error) {
      pool.release(slot);
      throw error;
    }
    if (n > 0) {
      if (n < slot.buffer.length && !s.hup)
        s.readable = false; // drained: the next arrival is an edge
      else io.passRead(s);
      slot.length = n;
      return slot;
    }
    pool.release(slot);
    if (n === 0) return null;
    if (!wouldBlock(n)) throw errnoException(n, "read");
    s.readable = false; // a spurious wake-up: wait again, holding nothing
  }
}
