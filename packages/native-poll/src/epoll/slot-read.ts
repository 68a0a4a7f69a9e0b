/**
 * Reads of the native backend into slots of its arena pool, taken once the
 * socket is readable (so that a task waiting for data holds no buffer):
 * `readSlot`'s, and the backend's `readChunk`, which lends the slot.
 */
import type * as B from "@bobbin/core";
import { type Chunk, SocketClosed } from "@bobbin/unix";
import { type ChunkLender, checkTimeouts, concurrentReadChunk, LentChunk } from "@bobbin/unix/backend";
import type { Slot } from "../arena.js";
import { errnoException } from "../errno.js";
import { wouldBlock } from "../raw/io.js";
import type { EpollIo } from "./io.js";
import { ReadableOp } from "./ops.js";
import type { NativeSocket } from "./socket.js";

/** A lent slot came back: to the pool, and the socket lends nothing any more. */
const SLOTS: ChunkLender<Slot> = {
  giveBack(sock, chunk, slot) {
    const s = sock as NativeSocket;
    if (s.lent === chunk) s.lent = null;
    slot.pool.release(slot);
  },
};

/** @internal The backend's `readChunk`: a slot taken once the socket is readable, lent until the next readChunk, its release or the close. */
export function* readChunkOp(io: EpollIo, s: NativeSocket): Generator<B.Instruction, Chunk | null, unknown> {
  if (s.chunkReading) throw concurrentReadChunk();
  s.lent?.takeBack();
  s.chunkReading = true;
  let slot: Slot | null;
  try {
    slot = yield* readSlotOp(io, s, "readChunk");
  } finally {
    s.chunkReading = false;
  }
  if (slot === null) return null;
  const chunk = new LentChunk(slot.buffer.subarray(0, slot.length), s, SLOTS, slot);
  s.lent = chunk;
  return chunk;
}

/** @internal Reads into a slot once the socket is readable: the slot, or null at the end of the stream. */
export function* readSlotOp(io: EpollIo, s: NativeSocket, name: string): Generator<B.Instruction, Slot | null, unknown> {
  const pool = io.pool;
  for (;;) {
    // Park without a slot until the socket is (maybe) readable, and behind a reader woken with bytes read ahead.
    if (s.delivered !== null || (!s.readable && !s.receiveShut)) yield* new ReadableOp(io, s, name);
    checkTimeouts();
    if (s.state === "closed") throw new SocketClosed(`${name}()`);
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
