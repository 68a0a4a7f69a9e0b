/**
 * The receiving side of a socket record, for backends that are handed the
 * bytes (a Node `'data'` callback, an io_uring completion, a simulated
 * segment): the chunks not read yet, then the stream's end or its error, and
 * the reads waiting for them — the socket's own `readChunk` among them, which
 * parks on the record itself. `read` copies across chunks into the caller's
 * buffer, so a read takes what it asks for and leaves the rest; back-pressure
 * stops the source above a high-water mark and starts it again below half.
 */
import type * as B from "@bobbin/core";
import { type ChunkLender, concurrentReadChunk, LentChunk } from "../chunk.js";
import type { Chunk, Socket, SocketBackend, SocketKind, SocketState } from "../contract.js";
import { SocketClosed } from "../errors.js";
import { BufferOp } from "./buffer-op.js";
import { ParkedBase } from "./parked.js";
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
// The socket's kind and state are numbers in the same field: two fields
// fewer for every connection.
const KIND_SHIFT = 4;
const STATE_SHIFT = 8;
const STATE_MASK = 7 << STATE_SHIFT;
// Above them, a count a socket class keeps (see `ownCount`), in 16 bits
// (`ParkedBase.upperBits` holds 27).
const COUNT_SHIFT = 11;
const BELOW_COUNT = (1 << COUNT_SHIFT) - 1;
const KINDS: readonly SocketKind[] = ["tcp4", "tcp6", "udp4", "udp6", "unix", "stream"];
const STATES: readonly SocketState[] = ["fresh", "listening", "bound", "connecting", "connected", "closed"];
const STATE_CODES: Readonly<Record<SocketState, number>> = { fresh: 0, listening: 1, bound: 2, connecting: 3, connected: 4, closed: 5 };

/**
 * What a socket record holds only once it needs it, apart from the record:
 * the queued chunks after the first, how much of the first was read, the
 * stream's error. A connection that waits for its next chunk, with nothing
 * queued, holds none, so these cost it no field; the first socket that needs
 * one makes it (`ReceiveQueue.cold`) and keeps it. A socket class with rare
 * fields of its own adds them in a subclass, made by its `newColdState()`.
 *
 * @example
 * ```ts
 * class MyColdState extends ColdState {
 *   opener: Parked<unknown> | null = null;
 * }
 * class MySocket extends BackendSocket<MyBackend> {
 *   protected override newColdState() { return new MyColdState(); }
 *   get opener() { return (this.coldIfAny as MyColdState | null)?.opener ?? null; }
 *   set opener(op) { (this.cold as MyColdState).opener = op; }
 * }
 * ```
 * @throws never
 */
export class ColdState {
  /** The queued chunks after the first, each followed by its length; null while at most one is queued. */
  more: (Uint8Array | number)[] | null = null;
  /** The bytes of the chunks in `more`. */
  moreBytes = 0;
  /** Bytes of the first chunk already read. */
  offset = 0;
  /** The stream failed: reads throw it once the queued bytes are read. */
  error: Error | null = null;
}

/**
 * The receiving side of a socket record (the base of {@link BackendSocket}):
 * bytes its stream received and no read took yet, in chunks, followed by
 * how the stream ended; and its readers. The source `push`es chunks, `end`s
 * or `fail`s the stream; a {@link ReadOp} (or an operation of the backend's
 * own) `read`s. Each arrival wakes the first reader, which wakes the next if
 * it left bytes behind; an end, an error or a close wakes them all.
 *
 * It also lends its chunks whole, without a copy (`readChunk`, through
 * {@link ReceiveQueue.readChunk}): one at a time, given back when the
 * holder releases it, at the next `readChunk`, or when the socket closes.
 * The record is itself the operation its `readChunk` parks on, so an idle
 * connection waiting for its next chunk holds no object of its own beyond
 * the record.
 *
 * The readers of the socket wait here (`addReader`, `wakeReader`…): a
 * backend's accepts and datagram receives too, on a socket that is not a
 * stream. Override `releaseChunk(chunk)` to hear that a chunk was read to its
 * end, dropped, or given back after a loan (give a borrowed buffer back),
 * `consumed(n)` when reads or loans took `n` bytes out of the queue,
 * `pauseSource()` once `queued` reached `highWater` and `resumeSource()` once reads
 * brought it to half of it (stop and restart the source), `wanted()` when a
 * read found nothing (start receiving, if the source waits to be asked);
 * `highWater` and `parkedCount` are getters, the same for every socket of a
 * backend.
 *
 * @example
 * ```ts
 * class MySocket extends BackendSocket<MyBackend> {
 *   constructor(kind: SocketKind, backend: MyBackend, readonly stream: net.Socket) { super(kind, backend); }
 *   protected override get highWater() { return 64 * 1024; }
 *   protected override pauseSource() { this.stream.pause(); }
 *   protected override resumeSource() { this.stream.resume(); }
 * }
 * stream.on("data", (chunk) => sock.push(chunk));
 * stream.on("end", () => sock.end());
 * stream.on("error", (error) => sock.fail(error));
 * // the backend's read(sock, buf, off, len): sock.readOp(buf, off, len); its readChunk(sock): sock.readChunk()
 * ```
 * @throws never itself; `read` throws the stream's error, and `SocketClosed` once closed.
 */
export abstract class ReceiveQueue extends ParkedBase<Chunk | null> implements Socket, ChunkLender<Uint8Array> {
  // Its flags (ENDED, RECEIVE_SHUT, CLOSED and PAUSED), the socket's kind and
  // state above them and `ownCount` above those are the operation's
  // `upperBits`: the record's phase as the operation its `readChunk` parks on
  // shares their field.
  // The first chunk is kept inline, the others in the cold state's array,
  // made only once more than one is queued (each chunk followed by its
  // length): an idle socket's queue holds no array. The bytes queued are
  // counted from them, not kept in a field.
  #head: Uint8Array | null = null;
  /** How many bytes of the first chunk are data. */
  #headLength = 0;
  /**
   * The chunk lent by `readChunk` and not given back yet, else `read`'s
   * kept operation (see `keptRead`): one field for the two, since a socket
   * is read one way or the other, and an idle one holds neither.
   */
  #side: LentChunk<Uint8Array> | BufferOp<number> | null = null;
  /**
   * Its readers: none, the one waiting (most often the record itself, in
   * its `readChunk`), or a queue of them once a second one waits (one field
   * for the three: an idle connection holds no queue).
   */
  #readers: ParkedBase<unknown> | WaitQueue | null = null;
  /** What the record holds only once it needs it (see {@link ColdState}): made by the first that needs it, then kept. */
  #cold: ColdState | null = null;

  // The socket's own (a BackendSocket's): the record is the socket.
  abstract readonly backend: SocketBackend;
  abstract [Symbol.dispose](): void;
  /** Where the socket is, for dumps ("tcp4 127.0.0.1:3000 ← 127.0.0.1:51234"). */
  abstract where(): string;

  /** @param kind the socket's kind (its state is `fresh`). */
  constructor(kind: SocketKind) {
    super();
    const code = KINDS.indexOf(kind);
    if (code < 0) throw new TypeError(`a socket's kind is one of ${KINDS.join(", ")}; got ${String(kind)}`);
    this.upperBits = code << KIND_SHIFT;
  }

  /** Bytes queued and not read yet. */
  get queued(): number {
    if (this.#head === null) return 0;
    const cold = this.#cold;
    return cold === null ? this.#headLength : this.#headLength - cold.offset + cold.moreBytes;
  }

  /** The stream failed: reads throw it once the queued bytes are read. */
  get error(): Error | null {
    return this.#cold?.error ?? null;
  }

  set error(error: Error | null) {
    if (error !== null || this.#cold !== null) this.cold.error = error;
  }

  /** Its cold state, made now if it has none. */
  protected get cold(): ColdState {
    return (this.#cold ??= this.newColdState());
  }

  /** Its cold state if it has one (reading it makes none). */
  protected get coldIfAny(): ColdState | null {
    return this.#cold;
  }

  /** Makes the record's cold state: override it to return a subclass of {@link ColdState} holding the rare fields of a socket class too. */
  protected newColdState(): ColdState {
    return new ColdState();
  }

  /** The socket's kind. */
  get kind(): SocketKind {
    return KINDS[(this.upperBits >> KIND_SHIFT) & 15]!;
  }

  /** Where the socket stands; the backend moves it. */
  get state(): SocketState {
    return STATES[(this.upperBits & STATE_MASK) >> STATE_SHIFT]!;
  }

  set state(state: SocketState) {
    this.upperBits = (this.upperBits & ~STATE_MASK) | (STATE_CODES[state] << STATE_SHIFT);
  }

  /**
   * A count the socket's class keeps for itself (`NodeSocket`: what of
   * Node's it holds), in the bits of the same field above the state: a
   * field of its own would cost every connection a word. At most 2^16 - 1.
   */
  protected get ownCount(): number {
    return this.upperBits >>> COUNT_SHIFT;
  }

  protected set ownCount(count: number) {
    this.upperBits = (this.upperBits & BELOW_COUNT) | (count << COUNT_SHIFT);
  }

  /**
   * `read`'s operation, kept for reuse while idle: the backend's
   * (`keptRead`), or the kit's {@link ReadOp} (see {@link ReceiveQueue.readOp}).
   * None is kept while a chunk `readChunk` lent is out (the chunk takes the
   * place): the next read makes its own.
   */
  get keptRead(): BufferOp<number> | null {
    const side = this.#side;
    return side instanceof LentChunk ? null : side;
  }

  set keptRead(op: BufferOp<number> | null) {
    if (!(this.#side instanceof LentChunk)) this.#side = op;
  }

  /** Bytes queued at which the source is paused (`Infinity`: never): the same for every socket of a backend. */
  protected get highWater(): number {
    return Infinity;
  }

  /** Counts the reads parked here with the backend's other parked operations (see `ParkedCount`); null: none. */
  protected get parkedCount(): ParkedCount | null {
    return null;
  }

  // -- its readers --

  /** How many operations wait to read (or accept, or receive). */
  get readerCount(): number {
    const readers = this.#readers;
    return readers === null ? 0 : readers instanceof WaitQueue ? readers.length : 1;
  }

  /** The reader that waits longest, if any. */
  get firstReader(): ParkedBase<unknown> | undefined {
    const readers = this.#readers;
    return readers === null ? undefined : readers instanceof WaitQueue ? readers.first : readers;
  }

  /** Parks `op` among the readers, at the end. */
  addReader(op: ParkedBase<unknown>): void {
    const readers = this.#readers;
    if (readers === null) this.#readers = op;
    else if (readers instanceof WaitQueue) readers.add(op);
    else {
      // A second reader: the queue is made now, and kept.
      const queue = new WaitQueue();
      queue.add(readers);
      queue.add(op);
      this.#readers = queue;
    }
    this.parkedCount?.parked();
  }

  /** `op` leaves the readers without being woken (its task was cancelled or interrupted); returns whether it was there. */
  leaveReader(op: ParkedBase<unknown>): boolean {
    const readers = this.#readers;
    if (readers === op) this.#readers = null;
    else if (!(readers instanceof WaitQueue) || !readers.leave(op)) return false;
    this.parkedCount?.left();
    return true;
  }

  /** Takes the first reader off without waking it (the caller hands it something, then calls its `ready()`). */
  takeReader(): ParkedBase<unknown> | undefined {
    const readers = this.#readers;
    let op: ParkedBase<unknown> | undefined;
    if (readers instanceof WaitQueue) op = readers.take();
    else if (readers !== null) {
      op = readers;
      this.#readers = null;
    }
    if (op !== undefined) this.parkedCount?.left();
    return op;
  }

  /** Wakes the reader that waits longest; false when none waits. */
  wakeReader(): boolean {
    const op = this.takeReader();
    if (op === undefined) return false;
    op.ready();
    return true;
  }

  /** Wakes every reader (each attempts again and sees why: closed, ended, shut down). */
  wakeReaders(): void {
    while (this.wakeReader());
  }

  /** The peer ended the stream: reads return 0 once the queued bytes are read. */
  get ended(): boolean {
    return (this.upperBits & ENDED) !== 0;
  }

  /** Shut down for receiving: what is queued and what arrives is dropped, and reads return 0. */
  get receiveShut(): boolean {
    return (this.upperBits & RECEIVE_SHUT) !== 0;
  }

  /** The socket is closed: reads throw `SocketClosed`. */
  get closed(): boolean {
    return (this.upperBits & CLOSED) !== 0;
  }

  /** Marks the queue closed without dropping or waking anything (a backend whose waiters are being cancelled); `close()` is the usual way. */
  set closed(closed: boolean) {
    this.upperBits = closed ? this.upperBits | CLOSED : this.upperBits & ~CLOSED;
  }

  /** The source is paused (at the high-water mark). */
  get paused(): boolean {
    return (this.upperBits & PAUSED) !== 0;
  }

  /**
   * A chunk arrived: its first `length` bytes are queued (dropped if the
   * socket is shut down for receiving or closed, released at once if empty),
   * and the first reader wakes.
   */
  push(chunk: Uint8Array, length: number = chunk.length): void {
    // An empty chunk is not queued: a lent chunk has at least one byte.
    if ((this.upperBits & (RECEIVE_SHUT | CLOSED)) !== 0 || length === 0) {
      this.releaseChunk(chunk);
      return;
    }
    if (this.#head === null) {
      this.#head = chunk;
      this.#headLength = length;
    } else {
      const cold = this.cold;
      (cold.more ??= []).push(chunk, length);
      cold.moreBytes += length;
    }
    if ((this.upperBits & PAUSED) === 0 && this.queued >= this.highWater) {
      this.upperBits |= PAUSED;
      this.pauseSource();
    }
    this.wakeReader();
  }

  /** The peer ended the stream (after what is queued). */
  end(): void {
    this.upperBits |= ENDED;
    this.wakeReaders();
  }

  /** The stream failed (after what is queued); the first error stays. */
  fail(error: Error): void {
    this.error ??= error;
    this.wakeReaders();
  }

  /** `shutdown(sock, "receive")`: drops what is queued; reads return 0 from now on. */
  shutdownReceive(): void {
    this.upperBits |= RECEIVE_SHUT;
    this.clear();
    this.wakeReaders();
  }

  /** The socket closed: drops what is queued and takes the lent chunk back; reads throw `SocketClosed`. */
  close(): void {
    this.upperBits |= CLOSED;
    this.takeBackLent();
    this.clear();
    this.wakeReaders();
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
      if (this.queued !== 0 || this.ended || this.error !== null) this.wakeReader();
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
   * chunk lent before. It parks on the record itself (`yield*` is handed
   * a `ChunkRead` whose iterator is the record).
   * @throws ChunkMisuse when a `readChunk` of the socket is in progress.
   */
  readChunk(): B.Operation<Chunk | null> {
    if (this.busy) throw concurrentReadChunk();
    this.takeBackLent();
    return new ChunkRead(this.claim());
  }

  /**
   * `read(sock, buf, off, len)` over this queue: the kept read operation
   * while it is idle, else a new one (another read of the socket is in
   * progress).
   */
  readOp(buf: Uint8Array, off: number, len: number): BufferOp<number> {
    let op = (this.keptRead ??= new ReadOp(this));
    if (op.busy) op = new ReadOp(this);
    return op.init(buf, off, len);
  }

  // The record as its own `readChunk`'s operation.

  protected get label(): string {
    return "readChunk";
  }

  protected attempt(): boolean {
    const chunk = this.lend();
    if (chunk === undefined) return false;
    this.value = chunk;
    return true;
  }

  protected wait(): void {
    this.addReader(this);
  }

  protected leave(): void {
    this.leaveReader(this);
  }

  /** "readChunk tcp4 127.0.0.1:3000 ← 127.0.0.1:51234": what a task parked in the socket's `readChunk` waits on. */
  override describe(): string {
    return `${super.describe()} ${this.where()}`;
  }

  /**
   * Lends the first queued chunk (the rest of it): the chunk, `null` at the
   * end of the stream, or `undefined` when nothing is there yet.
   * @throws SocketClosed once closed; the stream's error once the queued bytes are read.
   */
  lend(): LentChunk<Uint8Array> | null | undefined {
    if (this.closed) throw new SocketClosed("readChunk()");
    if (this.receiveShut) return null;
    if (this.queued !== 0) {
      const chunk = this.#head!;
      const length = this.#headLength;
      const from = this.#cold?.offset ?? 0;
      this.advance();
      const lent = new LentChunk(from === 0 && length === chunk.length ? chunk : chunk.subarray(from, length), this, this, chunk);
      this.#side = lent;
      this.taken(length - from);
      if (this.queued !== 0 || this.ended || this.error !== null) this.wakeReader();
      return lent;
    }
    if (this.error !== null) throw this.error;
    if (this.ended) return null;
    this.wanted();
    return undefined;
  }

  /** A lent chunk came back: its buffer is released. */
  giveBack(_sock: Socket, chunk: LentChunk<Uint8Array>, buffer: Uint8Array): void {
    if (this.#side === chunk) this.#side = null;
    this.releaseChunk(buffer);
  }

  /** Copies up to `len` queued bytes into `buf[off…]` and returns how many; read chunks are released, the source resumed below half the mark. */
  protected copyOut(buf: Uint8Array, off: number, len: number): number {
    let n = 0;
    for (let chunk = this.#head; n < len && chunk !== null; chunk = this.#head) {
      const from = this.#cold?.offset ?? 0;
      const count = Math.min(this.#headLength - from, len - n);
      buf.set(from === 0 && count === chunk.length ? chunk : chunk.subarray(from, from + count), off + n);
      n += count;
      if (from + count === this.#headLength) {
        this.advance();
        this.releaseChunk(chunk);
      } else {
        this.cold.offset = from + count;
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
    const cold = this.#cold;
    if (cold === null) {
      this.#head = null;
      return;
    }
    cold.offset = 0;
    const more = cold.more;
    if (more === null) {
      this.#head = null;
      return;
    }
    this.#head = more.shift() as Uint8Array;
    const length = more.shift() as number;
    this.#headLength = length;
    cold.moreBytes -= length;
    if (more.length === 0) cold.more = null;
  }

  /** @internal The chunk lent before comes back, if one is out. */
  private takeBackLent(): void {
    const side = this.#side;
    if (side instanceof LentChunk) side.takeBack();
  }

  /** @internal `n` bytes left the queue: the source resumes below half the mark. */
  private taken(n: number): void {
    this.consumed(n);
    if ((this.upperBits & PAUSED) !== 0 && this.queued <= this.highWater / 2) {
      this.upperBits &= ~PAUSED;
      this.resumeSource();
    }
  }

  /** Drops every queued chunk (each released). */
  clear(): void {
    const head = this.#head;
    const cold = this.#cold;
    const more = cold === null ? null : cold.more;
    this.#head = null;
    if (cold !== null) {
      cold.more = null;
      cold.moreBytes = 0;
      cold.offset = 0;
    }
    if (head !== null) this.releaseChunk(head);
    if (more !== null) for (let i = 0; i < more.length; i += 2) this.releaseChunk(more[i] as Uint8Array);
  }

  /** A chunk was read to its end, or dropped: give it back if it was lent. */
  protected releaseChunk(chunk: Uint8Array): void {
    void chunk;
  }

  /** Reads or a loan took `n` bytes out of the queue (0 or more). */
  protected consumed(n: number): void {
    void n;
  }

  /** `queued` reached the high-water mark: stop the source. */
  protected pauseSource(): void {}

  /** Reads brought `queued` to half the mark: start the source again. */
  protected resumeSource(): void {}

  /** A read found nothing: start receiving, if the source waits to be asked. */
  protected wanted(): void {}
}

// A socket is not iterable: deep equality (a test's `toEqual`) and spreads
// iterate what is, and would start its `readChunk`. `yield*` reaches the
// record through the `ChunkRead` that `readChunk` returns.
Object.defineProperty(ReceiveQueue.prototype, Symbol.iterator, { value: undefined });

/**
 * `readChunk`'s operation as `yield*` takes it: its iterator is the socket
 * record (parked there), and it is dropped once `yield*` began, so that an
 * idle connection's wait holds no object of its own.
 */
class ChunkRead implements B.Operation<Chunk | null> {
  constructor(private readonly sock: ReceiveQueue) {}

  [Symbol.iterator](): Iterator<B.Instruction, Chunk | null, unknown> {
    return this.sock;
  }
}

/**
 * `read` over a {@link ReceiveQueue}: the bytes it queued, 0 at the end of
 * the stream. The socket keeps one for reuse and hands it out
 * ({@link ReceiveQueue.readOp}; see {@link BufferOp}).
 *
 * @example
 * ```ts
 * read(sock, buf, off, len) {
 *   return (sock as MySocket).readOp(buf, off, len);
 * }
 * ```
 * @throws SocketClosed, the stream's error, `Cancelled`, `Timeout`.
 */
export class ReadOp extends BufferOp<number> {
  constructor(
    /** The socket it reads. */
    readonly input: ReceiveQueue,
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
    this.input.addReader(this);
  }

  protected leave(): void {
    this.input.leaveReader(this);
  }

  override describe(): string {
    return `${super.describe()} ${this.input.where()}`;
  }
}
