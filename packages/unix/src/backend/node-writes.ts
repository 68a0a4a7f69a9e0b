/**
 * Write completion over a Node `Writable` (a `net.Socket`, a TLS socket,
 * any stream). The contract's `write` returns once its bytes are handed to
 * the system, so that the caller may reuse its buffer at once. With Node,
 * that is when the bytes left the stream's own buffer: at once when libuv
 * wrote them synchronously (the stream's `writableLength` is 0 again, the
 * usual case), otherwise when the write's callback comes. A write that
 * returned earlier could still lose its bytes: `destroy()` — what `close`
 * does — drops what Node has not written yet.
 */
import type { Writable } from "node:stream";
import { SocketClosed } from "../errors.js";
import { BufferOp } from "./buffer-op.js";
import { WaitQueue } from "./wait-queue.js";

/**
 * The writes handed to one Node stream and how far Node got: each has a
 * number, Node calls back in order, and a write is over once the count of
 * callbacks reaches its number. One callback function serves every write
 * (nothing is allocated per write).
 *
 * @example
 * ```ts
 * readonly writes = new NodeWrites();
 * const n = this.writes.write(stream, bytes);   // 0: written at once
 * // later, in the operation: this.writes.done(n) once Node called back, then this.writes.failure(n, streamError)
 * stream.on("close", () => this.writes.abandon(this.error ?? new Error("the socket closed with writes pending")));
 * ```
 * @throws never itself; `write` throws the error of a write that failed at once.
 */
export class NodeWrites {
  /** The writes waiting for their callback, in the order they were handed over. */
  readonly writers = new WaitQueue<NodeWriteOp>();
  /** Writes handed to Node, and writes Node reported done. */
  #handed = 0;
  #done = 0;
  /** The error of the last failed write, and its number. */
  #error: Error | null = null;
  #errorAt = 0;
  /** After `close`: callbacks that come are for writes `destroy()` dropped. */
  #closed = false;
  /** Shut down for sending: the stream was ended (its writer's to set and read). */
  sendShut = false;
  /** `write`'s operation, kept for reuse while idle (see {@link NodeWrites.writeOp}). */
  #op: NodeWriteOp | null = null;
  readonly #written = (error?: Error | null): void => {
    this.#done++;
    // Node calls back without an error for the writes its destroy() dropped:
    // once the socket is closed, a write is not known to have been sent.
    if (error || this.#closed) {
      this.#error = error ?? new SocketClosed("write()");
      this.#errorAt = this.#done;
    }
    const writers = this.writers;
    for (let op = writers.first; op !== undefined && op.number <= this.#done; op = writers.first) writers.wakeFirst();
  };

  /**
   * Hands `bytes` to `stream`. Returns 0 when Node wrote them at once (the
   * caller's buffer may be reused now), else the write's number for {@link done}.
   * @throws the stream's error when the write failed at once (`EPIPE`, `ECONNRESET`).
   */
  write(stream: Writable, bytes: Uint8Array): number {
    const n = ++this.#handed;
    stream.write(bytes, this.#written);
    if (stream.writableLength !== 0) return n;
    const error = stream.errored;
    if (error) throw error;
    return 0;
  }

  /** `write(sock, buf, off, len)` to `to`: the kept operation while it is idle, else a new one (another write is in progress). */
  writeOp(to: NodeWriter, buf: Uint8Array, off: number, len: number): NodeWriteOp {
    let op = (this.#op ??= new NodeWriteOp(to));
    if (op.busy) op = new NodeWriteOp(to);
    return op.init(buf, off, len);
  }

  /** Whether write `n` is over: Node called it back (or the stream is gone). */
  done(n: number): boolean {
    return this.#done >= n;
  }

  /**
   * Why write `n`, which is over, failed: `SocketClosed` when the socket was
   * closed meanwhile, else `streamError` (the stream's own, which says more)
   * or the error Node gave the write; null when it succeeded.
   */
  failure(n: number, streamError: Error | null): Error | null {
    if (this.#error === null || this.#errorAt < n) return null;
    return this.#closed ? new SocketClosed("write()") : (streamError ?? this.#error);
  }

  /**
   * The socket is closed: writes still waiting fail with `SocketClosed`
   * (their bytes may be lost) as Node calls them back — destroy the stream
   * next, which does.
   */
  close(): void {
    this.#closed = true;
    this.writers.wakeAll();
  }

  /** The stream is gone: writes whose callback never came fail with `error`. */
  abandon(error: Error): void {
    if (this.#done < this.#handed) {
      this.#done = this.#handed;
      this.#error ??= error;
      this.#errorAt = this.#handed;
    }
    this.writers.wakeAll();
  }
}

/**
 * What a {@link NodeWriteOp} writes to: the socket's Node stream, when it
 * may be written, and its {@link NodeWrites}.
 *
 * @example
 * ```ts
 * class MyStream implements NodeWriter {
 *   readonly writes = new NodeWrites();
 *   error: Error | null = null;               // set by the stream's 'error' event
 *   streamError() { return this.error; }
 *   writable(): net.Socket {
 *     if (this.sock.state === "closed") throw new SocketClosed("write()");
 *     if (this.writes.sendShut) throw systemError("EPIPE", "write", "the socket was shut down for sending");
 *     return this.stream;
 *   }
 *   where() { return this.sock.where(); }
 * }
 * ```
 * @throws never (an interface).
 */
export interface NodeWriter {
  readonly writes: NodeWrites;
  /** The stream's error, if it failed (a write that fails says it rather than its own). */
  streamError(): Error | null;
  /**
   * The stream to write to.
   * @throws SocketClosed, `EPIPE` (shut down for sending, ended, destroyed), the stream's error.
   */
  writable(): Writable;
  /** Where the socket is, for dumps. */
  where(): string;
}

/**
 * `write` to a Node stream: hands the bytes over, and returns once Node
 * wrote them (see {@link NodeWrites}). The writer's `NodeWrites` keeps one
 * for reuse and hands it out ({@link NodeWrites.writeOp}; see {@link BufferOp}).
 *
 * @example
 * ```ts
 * write(sock, buf, off, len) {
 *   const stream = (sock as MySocket).stream;   // a NodeWriter
 *   return stream.writes.writeOp(stream, buf, off, len);
 * }
 * ```
 * @throws SocketClosed, `EPIPE`, the stream's error (`ECONNRESET`…), `Cancelled`, `Timeout`.
 */
export class NodeWriteOp extends BufferOp<void> {
  /** The write's number once handed to Node and not written at once (0 before). */
  number = 0;

  constructor(private readonly to: NodeWriter) {
    super("write");
  }

  override init(buf: Uint8Array, off: number, len: number): this {
    this.number = 0;
    return super.init(buf, off, len);
  }

  protected attempt(): boolean {
    const n = this.number;
    if (n !== 0) {
      const writes = this.to.writes;
      if (!writes.done(n)) return false;
      const error = writes.failure(n, this.to.streamError());
      if (error !== null) throw error;
      return true;
    }
    const stream = this.to.writable();
    const buf = this.buf;
    const bytes = this.off === 0 && this.len === buf.length ? buf : buf.subarray(this.off, this.off + this.len);
    this.number = this.to.writes.write(stream, bytes);
    return this.number === 0;
  }

  protected wait(): void {
    const writes = this.to.writes;
    // The callback may have come already (a write that failed synchronously
    // calls back at once): attempt again rather than wait for one.
    if (writes.done(this.number)) this.ready();
    else writes.writers.add(this);
  }

  protected leave(): void {
    this.to.writes.writers.leave(this);
  }

  override describe(): string {
    return `${super.describe()} ${this.to.where()}`;
  }
}
