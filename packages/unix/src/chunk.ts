/**
 * Lent chunks: the bytes `readChunk` returns in memory the backend lends
 * (an arena slot, a provided buffer of io_uring, Node's own buffer), and the
 * rules of the loan. A socket lends one chunk at a time: the chunk goes back
 * at its `release()`, at the next `readChunk` on the socket, or when the
 * socket closes, whichever comes first; after that its bytes are refused
 * (`ChunkMisuse`) rather than shown while the memory serves someone else.
 */
import type { Chunk, Socket } from "./contract.js";
import { ChunkMisuse } from "./errors.js";

/**
 * What lends a chunk's memory, and gets it back: a backend, a socket's
 * received-chunk queue. `token` is what it lent with the chunk (the slot,
 * the buffer the bytes are a view of).
 *
 * @example
 * ```ts
 * const lender: ChunkLender<Slot> = {
 *   giveBack(sock, chunk, slot) {
 *     if ((sock as MySocket).lent === chunk) (sock as MySocket).lent = null;
 *     pool.release(slot);
 *   },
 * };
 * ```
 */
export interface ChunkLender<T> {
  /** The chunk was released or taken back: the memory behind it is free again. Called once per chunk. */
  giveBack(sock: Socket, chunk: LentChunk<T>, token: T): void;
}

/**
 * The `ChunkMisuse` for a `readChunk` on a socket where another one waits:
 * what a backend's `readChunk` throws then.
 *
 * @example
 * ```ts
 * if (sock.chunkOp.busy) throw concurrentReadChunk();
 * ```
 * @throws never (it returns the error).
 */
export function concurrentReadChunk(): ChunkMisuse {
  return new ChunkMisuse(
    "concurrent readChunk",
    "readChunk(): another readChunk waits on this socket; read a socket from one task at a time (a chunk is lent until the next readChunk)",
  );
}

const LENT = 0;
const RELEASED = 1;
const TAKEN_BACK = 2;

/**
 * A {@link Chunk} as a backend makes it: the bytes, the socket they came
 * from, and who to give them back to. The backend keeps the socket's one
 * lent chunk and calls `takeBack()` at the next `readChunk` and when the
 * socket closes; a chunk whose socket is closed refuses its bytes by
 * itself.
 *
 * @example
 * ```ts
 * const chunk = new LentChunk(slot.buffer.subarray(0, n), sock, lender, slot);
 * sock.lent = chunk;
 * // the next readChunk on sock, or its close:
 * sock.lent?.takeBack();
 * ```
 * @throws ChunkMisuse as {@link Chunk}.
 */
export class LentChunk<T = unknown> implements Chunk {
  #bytes: Uint8Array | null;
  #state = LENT;
  #token: T | null;
  readonly #sock: Socket;
  readonly #lender: ChunkLender<T> | null;

  /** @param lender null: the bytes are the chunk's own (garbage-collected), nothing to give back. */
  constructor(bytes: Uint8Array, sock: Socket, lender: ChunkLender<T> | null, token: T) {
    this.#bytes = bytes;
    this.#sock = sock;
    this.#lender = lender;
    this.#token = token;
  }

  get bytes(): Uint8Array {
    return this.lentBytes("chunk.bytes");
  }

  get length(): number {
    return this.lentBytes("chunk.length").length;
  }

  release(): void {
    if (this.#state === RELEASED) {
      throw new ChunkMisuse("released twice", "chunk.release(): the chunk was released already; release each chunk once");
    }
    if (this.#state === LENT) this.giveBackAs(RELEASED);
  }

  /**
   * For the backend: the socket reads again or closes, so the loan ends
   * here (a chunk released already is left alone). Later uses of the chunk
   * throw `ChunkMisuse`; its `release()` does nothing.
   */
  takeBack(): void {
    if (this.#state === LENT) this.giveBackAs(TAKEN_BACK);
  }

  // The helpers below are TypeScript-private, not `#` methods: a class with
  // `#` methods gives each instance a brand field, a word every lent chunk
  // would pay.

  /** @internal */
  private lentBytes(what: string): Uint8Array {
    const bytes = this.#bytes;
    if (bytes !== null && this.#sock.state !== "closed") return bytes;
    const why =
      this.#state === RELEASED
        ? "it was released"
        : this.#state === TAKEN_BACK && this.#sock.state !== "closed"
          ? "the next readChunk on its socket took it back"
          : "its socket was closed";
    throw new ChunkMisuse(
      "use after release",
      `${what}: the chunk's memory went back to the runtime (${why}); copy the bytes you keep before releasing the chunk, reading again or closing`,
    );
  }

  /** @internal */
  private giveBackAs(state: number): void {
    const token = this.#token as T;
    this.#state = state;
    this.#bytes = null;
    this.#token = null;
    this.#lender?.giveBack(this.#sock, this, token);
  }
}
