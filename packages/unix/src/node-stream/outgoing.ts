/**
 * What a `toStream` stream's producer wrote, made ready for the socket: the
 * chunks of one `_write` or `_writev` — strings as Node's `http` writes its
 * heads, and buffers — joined into one buffer taken from a pool, so that one
 * response is one write of the socket, and nothing is allocated for it. A
 * write too large to join is its chunks, one write each.
 *
 * The chunks are joined when the write comes, and the socket usually takes
 * the bytes at once (the backend's `tryWrite`, or the writer task's first
 * attempt): the buffer goes back to the pool, so the streams of a server
 * share a few buffers however many write in one turn.
 */

/** Chunks of one write are joined into one buffer up to this many bytes. */
const JOIN_LIMIT = 64 * 1024;
/** How many joining buffers are kept for the next writes (the rest go to the GC). */
const SPARES = 4;

const spares: Buffer[] = [];

/** A chunk as the stream hands it over with `decodeStrings: false`. */
export interface Chunk {
  readonly chunk: Uint8Array | string;
  readonly encoding: BufferEncoding | "buffer";
}

/** @internal One write of the socket: what the stream was given, then its bytes. */
export class Outgoing {
  /** One chunk (`_write`), or null. */
  private chunk: Uint8Array | string | null = null;
  private encoding: BufferEncoding | "buffer" = "buffer";
  /** Several chunks (`_writev`), or null. */
  private chunks: readonly Chunk[] | null = null;
  /** The bytes to write, once {@link Outgoing.join} made them: `buf[0, len)`. */
  buf: Uint8Array | null = null;
  len = 0;
  /** A write too large to join, after {@link Outgoing.join}: its chunks as bytes, written in order. */
  pieces: Uint8Array[] | null = null;
  /** Whether `buf` is a joining buffer, to give back once written. */
  private pooled = false;

  /** The chunk of a `_write`. */
  one(chunk: Uint8Array | string, encoding: BufferEncoding | "buffer"): void {
    this.chunk = chunk;
    this.encoding = encoding;
  }

  /** The chunks of a `_writev`. */
  many(chunks: readonly Chunk[]): void {
    this.chunks = chunks;
  }

  /** Makes the bytes to write: `buf` and `len`, or `pieces`. */
  join(): void {
    const chunks = this.chunks;
    if (chunks === null) {
      this.joinOne(this.chunk!, this.encoding);
      return;
    }
    let size = 0;
    for (const { chunk, encoding } of chunks) size += byteLength(chunk, encoding);
    if (size > JOIN_LIMIT) {
      this.pieces = chunks.map(({ chunk, encoding }) =>
        typeof chunk === "string" ? Buffer.from(chunk, encoding as BufferEncoding) : chunk,
      );
      return;
    }
    const buf = take();
    let at = 0;
    for (const { chunk, encoding } of chunks) {
      if (typeof chunk === "string") at += buf.write(chunk, at, size - at, encoding as BufferEncoding);
      else {
        buf.set(chunk, at);
        at += chunk.length;
      }
    }
    this.pool(buf, at);
  }

  /**
   * The write is over: a joining buffer goes back to the pool when the
   * socket took every byte (`written`); after a failure or a cancellation the
   * backend may still hold it, so it is left to the GC.
   */
  clear(written: boolean): void {
    if (written && this.pooled && spares.length < SPARES) spares.push(this.buf as Buffer);
    this.chunk = null;
    this.chunks = null;
    this.buf = null;
    this.len = 0;
    this.pooled = false;
    this.pieces = null;
  }

  /** A buffer is written as it is; a string is encoded into a joining buffer when it fits. */
  private joinOne(chunk: Uint8Array | string, encoding: BufferEncoding | "buffer"): void {
    if (typeof chunk !== "string") {
      this.buf = chunk;
      this.len = chunk.length;
      return;
    }
    const size = byteLength(chunk, encoding);
    if (size > JOIN_LIMIT) {
      const bytes = Buffer.from(chunk, encoding as BufferEncoding);
      this.buf = bytes;
      this.len = bytes.length;
      return;
    }
    const buf = take();
    this.pool(buf, buf.write(chunk, 0, size, encoding as BufferEncoding));
  }

  private pool(buf: Buffer, len: number): void {
    this.buf = buf;
    this.len = len;
    this.pooled = true;
  }
}

function byteLength(chunk: Uint8Array | string, encoding: BufferEncoding | "buffer"): number {
  return typeof chunk === "string" ? Buffer.byteLength(chunk, encoding as BufferEncoding) : chunk.length;
}

function take(): Buffer {
  return spares.pop() ?? Buffer.allocUnsafeSlow(JOIN_LIMIT);
}
