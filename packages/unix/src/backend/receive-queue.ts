/**
 * The receiving side of a stream socket for backends that are handed the
 * bytes (a Node `'data'` callback, an io_uring completion, a simulated
 * segment): the chunks not read yet, then the stream's end or its error, and
 * the reads waiting for them. `read` copies across chunks into the caller's
 * buffer, so a read takes what it asks for and leaves the rest; back-pressure
 * stops the source above a high-water mark and starts it again below half.
 */
import type * as B from "@bobbin/core";
import { type Chunk, type ChunkLender, concurrentReadChunk, LentChunk } from "../chunk.js";
import type { Socket } from "../contract.js";
import { SocketClosed } from "../errors.js";
import { BufferOp } from "./buffer-op.js";
import { Parked } from "./parked.js";
import type { BackendSocket } from "./socket.js";
import { type ParkedCount, WaitQueue } from "./wait-queue.js";

/** What `read` returns while nothing is there yet. */
const AGAIN = -1;

// How the queue stands, as bits of one field (a field per flag would cost
// every connection a word each).
/** The peer ended the stream. */
const ENDED = 1;
/** Shut down for receiving. */
const RECEIVE_SHUT = 2;
/** The socket is closed. */
const CLOSED = 4;
/** The source is paused. */
const PAUSED = 8;

/**
 * Bytes a stream socket received and no read took yet, in chunks, followed
 * by how the stream ended; and its readers. The source `push`es chunks,
 * `end`s or `fail`s the stream; a {@link ReadOp} (or an operation of the
 * backend's own) `read`s. Each arrival wakes the first reader, which wakes
 * the next if it left bytes behind; an end, an error or a close wakes them
 * all.
 *
 * It also lends its chunks whole, without a copy (`readChunk`, through
 * {@link ReceiveQueue.readChunk}): one at a time, given back when the
 * holder releases it, at the next `readChunk`, or when the queue closes.
 *
 * Subclass it to hear of the flow: `release(chunk)` when a chunk was read to
 * its end, dropped, or given back after a loan (give a borrowed buffer back),
 * `consumed(n)` when reads or loans took `n` bytes out of the queue, `pause()` once `queued`
 * reached `highWater` and `resume()` once reads brought it to half of it
 * (stop and restart the source), `wanted()` when a read found nothing (start
 * receiving, if the source waits to be asked).
 *
 * @example
 * ```ts
 * class Input extends ReceiveQueue {
 *   constructor(private readonly stream: net.Socket) { super(64 * 1024); }
 *   protected override pause() { this.stream.pause(); }
 *   protected override resume() { this.stream.resume(); }
 * }
 * const input = new Input(stream);
 * stream.on("data", (chunk) => input.push(chunk));
 * stream.on("end", () => input.end());
 * stream.on("error", (error) => input.fail(error));
 * // the backend's read(sock, buf, off, len): a kept ReadOp over input, `op.init(buf, off, len)`
 * ```
 * @throws never itself; `read` throws the stream's error, and `SocketClosed` once closed.
 */
export class ReceiveQueue extends WaitQueue implements ChunkLender<Uint8Array> {
  /** Bytes queued and not read yet. */
  queued = 0;
  /** The stream failed: reads throw it once the queued bytes are read. */
  error: Error | null = null;
  /** ENDED, RECEIVE_SHUT, CLOSED and PAUSED. */
  #flags = 0;
  // The first chunk is kept inline, the others in an array made only while
  // more than one is queued (each chunk followed by its length): an idle
  // socket's queue holds no array.
  #head: Uint8Array | null = null;
  /** How many bytes of the first chunk are data. */
  #headLength = 0;
  #more: (Uint8Array | number)[] | null = null;
  /** Bytes of the first chunk already read. */
  #offset = 0;
  readonly #highWater: number;
  /** The chunk lent by `readChunk` and not given back yet. */
  #lent: LentChunk<Uint8Array> | null = null;
  /**
   * The read operation kept for reuse: `readChunk`'s, or `read`'s through
   * {@link ReceiveQueue.readOp} (one field for both: a socket is read one
   * way or the other, and each idle connection would pay a second one).
   */
  #op: ChunkOp | ReadOp | null = null;

  /**
   * @param highWater bytes queued at which the source is paused (`Infinity`: never).
   * @param count counts the reads parked here with the backend's other parked operations (see `ParkedCount`).
   */
  constructor(highWater = Infinity, count: ParkedCount | null = null) {
    super(count);
    this.#highWater = highWater;
  }

  /**
   * The reads waiting for bytes (or for the end): the queue itself, which is
   * the wait queue its readers park in (a queue of its own would cost every
   * idle connection an object).
   */
  get readers(): WaitQueue {
    return this;
  }

  /** The peer ended the stream: reads return 0 once the queued bytes are read. */
  get ended(): boolean {
    return (this.#flags & ENDED) !== 0;
  }

  /** Shut down for receiving: what is queued and what arrives is dropped, and reads return 0. */
  get receiveShut(): boolean {
    return (this.#flags & RECEIVE_SHUT) !== 0;
  }

  /** The socket is closed: reads throw `SocketClosed`. */
  get closed(): boolean {
    return (this.#flags & CLOSED) !== 0;
  }

  /** Marks the queue closed without dropping or waking anything (a backend whose waiters are being cancelled); `close()` is the usual way. */
  set closed(closed: boolean) {
    this.#flags = closed ? this.#flags | CLOSED : this.#flags & ~CLOSED;
  }

  /** The source is paused (at the high-water mark). */
  get paused(): boolean {
    return (this.#flags & PAUSED) !== 0;
  }

  /**
   * A chunk arrived: its first `length` bytes are queued (dropped if the
   * socket is shut down for receiving or closed, released at once if empty),
   * and the first reader wakes.
   */
  push(chunk: Uint8Array, length: number = chunk.length): void {
    // An empty chunk is not queued: a lent chunk has at least one byte.
    if ((this.#flags & (RECEIVE_SHUT | CLOSED)) !== 0 || length === 0) {
      this.release(chunk);
      return;
    }
    if (this.#head === null) {
      this.#head = chunk;
      this.#headLength = length;
    } else {
      (this.#more ??= []).push(chunk, length);
    }
    this.queued += length;
    if ((this.#flags & PAUSED) === 0 && this.queued >= this.#highWater) {
      this.#flags |= PAUSED;
      this.pause();
    }
    this.readers.wakeFirst();
  }

  /** The peer ended the stream (after what is queued). */
  end(): void {
    this.#flags |= ENDED;
    this.readers.wakeAll();
  }

  /** The stream failed (after what is queued); the first error stays. */
  fail(error: Error): void {
    this.error ??= error;
    this.readers.wakeAll();
  }

  /** `shutdown(sock, "receive")`: drops what is queued; reads return 0 from now on. */
  shutdownReceive(): void {
    this.#flags |= RECEIVE_SHUT;
    this.clear();
    this.readers.wakeAll();
  }

  /** The socket closed: drops what is queued and takes the lent chunk back; reads throw `SocketClosed`. */
  close(): void {
    this.#flags |= CLOSED;
    this.#lent?.takeBack();
    this.clear();
    this.readers.wakeAll();
  }

  /**
   * Reads up to `len > 0` bytes into `buf[off…]`: how many, 0 at the end of
   * the stream, or -1 when nothing is there yet (park and try again).
   * @throws SocketClosed once closed; the stream's error once the queued bytes are read.
   */
  read(buf: Uint8Array, off: number, len: number): number {
    if (this.closed) throw new SocketClosed("read()");
    if (this.receiveShut) return 0;
    if (this.queued !== 0) {
      const n = this.copyOut(buf, off, len);
      if (this.queued !== 0 || this.ended || this.error !== null) this.readers.wakeFirst();
      return n;
    }
    if (this.error !== null) throw this.error;
    if (this.ended) return 0;
    this.wanted();
    return AGAIN;
  }

  /**
   * `readChunk(sock)` over this queue: the first queued chunk (what is left
   * of it), lent whole; `null` at the end of the stream. Takes back the
   * chunk lent before.
   * @throws ChunkMisuse when a `readChunk` of the queue is in progress.
   */
  readChunk(sock: Socket): B.Operation<Chunk | null> {
    let op = this.#op;
    if (!(op instanceof ChunkOp)) {
      // A read in progress goes on with its own operation; this one is kept.
      op = new ChunkOp(this, sock);
      this.#op = op;
    } else if (op.busy) throw concurrentReadChunk();
    this.#lent?.takeBack();
    return op.begin();
  }

  /**
   * `read(sock, buf, off, len)` over this queue: the kept read operation
   * while it is idle, else a new one (another read of the socket is in
   * progress, or a `readChunk`, whose operation stays kept).
   */
  readOp(sock: BackendSocket, buf: Uint8Array, off: number, len: number): ReadOp {
    let op = this.#op;
    if (!(op instanceof ReadOp) || op.busy) {
      const kept = op;
      op = new ReadOp(this, sock);
      if (kept === null || !kept.busy) this.#op = op;
    }
    return op.init(buf, off, len);
  }

  /**
   * Lends the first queued chunk (the rest of it): the chunk, `null` at the
   * end of the stream, or `undefined` when nothing is there yet.
   * @throws SocketClosed once closed; the stream's error once the queued bytes are read.
   */
  lend(sock: Socket): LentChunk<Uint8Array> | null | undefined {
    if (this.closed) throw new SocketClosed("readChunk()");
    if (this.receiveShut) return null;
    if (this.queued !== 0) {
      const chunk = this.#head!;
      const length = this.#headLength;
      const from = this.#offset;
      this.advance();
      const lent = new LentChunk(from === 0 && length === chunk.length ? chunk : chunk.subarray(from, length), sock, this, chunk);
      this.#lent = lent;
      this.taken(length - from);
      if (this.queued !== 0 || this.ended || this.error !== null) this.readers.wakeFirst();
      return lent;
    }
    if (this.error !== null) throw this.error;
    if (this.ended) return null;
    this.wanted();
    return undefined;
  }

  /** A lent chunk came back: its buffer is released. */
  giveBack(_sock: Socket, chunk: LentChunk<Uint8Array>, buffer: Uint8Array): void {
    if (this.#lent === chunk) this.#lent = null;
    this.release(buffer);
  }

  /** Copies up to `len` queued bytes into `buf[off…]` and returns how many; read chunks are released, the source resumed below half the mark. */
  protected copyOut(buf: Uint8Array, off: number, len: number): number {
    let n = 0;
    for (let chunk = this.#head; n < len && chunk !== null; chunk = this.#head) {
      const from = this.#offset;
      const count = Math.min(this.#headLength - from, len - n);
      buf.set(from === 0 && count === chunk.length ? chunk : chunk.subarray(from, from + count), off + n);
      n += count;
      if (from + count === this.#headLength) {
        this.advance();
        this.release(chunk);
      } else {
        this.#offset = from + count;
      }
    }
    this.taken(n);
    return n;
  }

  // The helpers below are TypeScript-private, not `#` methods: a class with
  // `#` methods gives each instance a brand field, a word every idle
  // connection's queue would pay.

  /** @internal The first chunk leaves the queue: the next one (if any) is first. */
  private advance(): void {
    this.#offset = 0;
    const more = this.#more;
    if (more === null) {
      this.#head = null;
      return;
    }
    this.#head = more.shift() as Uint8Array;
    this.#headLength = more.shift() as number;
    if (more.length === 0) this.#more = null;
  }

  /** @internal `n` bytes left the queue: the source resumes below half the mark. */
  private taken(n: number): void {
    this.queued -= n;
    this.consumed(n);
    if ((this.#flags & PAUSED) !== 0 && this.queued <= this.#highWater / 2) {
      this.#flags &= ~PAUSED;
      this.resume();
    }
  }

  /** Drops every queued chunk (each released). */
  clear(): void {
    const head = this.#head;
    const more = this.#more;
    this.#head = null;
    this.#more = null;
    this.#offset = 0;
    this.queued = 0;
    if (head !== null) this.release(head);
    if (more !== null) for (let i = 0; i < more.length; i += 2) this.release(more[i] as Uint8Array);
  }

  /** A chunk was read to its end, or dropped: give it back if it was lent. */
  protected release(chunk: Uint8Array): void {
    void chunk;
  }

  /** Reads or a loan took `n` bytes out of the queue (0 or more). */
  protected consumed(n: number): void {
    void n;
  }

  /** `queued` reached the high-water mark: stop the source. */
  protected pause(): void {}

  /** Reads brought `queued` to half the mark: start the source again. */
  protected resume(): void {}

  /** A read found nothing: start receiving, if the source waits to be asked. */
  protected wanted(): void {}
}

/**
 * `read` over a {@link ReceiveQueue}: the bytes it queued, 0 at the end of
 * the stream. The queue keeps one for reuse and hands it out
 * ({@link ReceiveQueue.readOp}; see {@link BufferOp}).
 *
 * @example
 * ```ts
 * read(sock, buf, off, len) {
 *   return (sock as MySocket).input.readOp(sock as MySocket, buf, off, len);
 * }
 * ```
 * @throws SocketClosed, the stream's error, `Cancelled`, `Timeout`.
 */
export class ReadOp extends BufferOp<number> {
  constructor(
    /** The queue it reads. */
    readonly input: ReceiveQueue,
    /** Its socket, which says where it is in dumps ("read tcp4 127.0.0.1:3000 ← 127.0.0.1:51234"). */
    private readonly sock: BackendSocket,
  ) {
    super("read");
  }

  protected attempt(): boolean {
    const n = this.input.read(this.buf, this.off, this.len);
    if (n < 0) return false;
    this.value = n;
    return true;
  }

  protected wait(): void {
    this.input.readers.add(this);
  }

  protected leave(): void {
    this.input.readers.leave(this);
  }

  override describe(): string {
    return `${super.describe()} ${this.sock.describe()}`;
  }
}

/** `readChunk` over a {@link ReceiveQueue}: parks holding nothing, then lends the first chunk. Kept by its queue. */
class ChunkOp extends Parked<Chunk | null> {
  constructor(
    private readonly input: ReceiveQueue,
    private readonly sock: Socket & { describe?(): string },
  ) {
    super("readChunk");
  }

  /** Claims it for one call. */
  begin(): this {
    return this.claim();
  }

  protected attempt(): boolean {
    const chunk = this.input.lend(this.sock);
    if (chunk === undefined) return false;
    this.value = chunk;
    return true;
  }

  protected wait(): void {
    this.input.readers.add(this);
  }

  protected leave(): void {
    this.input.readers.leave(this);
  }

  override describe(): string {
    return `${super.describe()} ${this.sock.describe?.() ?? this.sock.kind}`;
  }
}
