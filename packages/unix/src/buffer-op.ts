/**
 * The reusable shape of a read or write operation: a `Parked` over
 * `buf[off, off + len)` that a socket keeps and hands out again while it is
 * idle, so that the read/write path allocates nothing per call.
 */
import { Parked } from "./parked.js";

const EMPTY = new Uint8Array(0);

/**
 * A {@link Parked} operation on `buf[off, off + len)`, made to be kept by its
 * socket and reused: `init` prepares it for one call and marks it `busy`;
 * when the operation is over, it drops the buffer (so a kept operation holds
 * no caller's memory) and is idle again. A socket hands out a fresh one when
 * its kept one is `busy` (two reads at once, from two tasks).
 *
 * @example
 * ```ts
 * class ReadOp extends BufferOp<number> {
 *   constructor(private sock: MySocket) { super("read"); }
 *   protected attempt() {
 *     const n = this.sock.take(this.buf, this.off, this.len); // -1: nothing yet
 *     if (n < 0) return false;
 *     this.value = n;
 *     return true;
 *   }
 *   protected wait() { this.sock.readers.push(this); }
 *   protected unwait() { removeWaiter(this.sock.readers, this); }
 * }
 * // in the backend:
 * read(sock, buf, off, len) {
 *   let op = sock.readOp ??= new ReadOp(sock);
 *   if (op.busy) op = new ReadOp(sock);
 *   return op.init(buf, off, len);
 * }
 * ```
 * @throws whatever {@link Parked} throws when run: `Cancelled`, `Timeout`, what `attempt` throws.
 */
export abstract class BufferOp<T> extends Parked<T> {
  protected buf: Uint8Array = EMPTY;
  protected off = 0;
  protected len = 0;
  /** Handed out by `init` and not finished yet. */
  busy = false;

  /**
   * Prepares the operation for one call over `buf[off, off + len)`. Override
   * it to reset more state, calling `super.init`.
   * @throws never
   */
  init(buf: Uint8Array, off: number, len: number): this {
    this.buf = buf;
    this.off = off;
    this.len = len;
    this.busy = true;
    return this;
  }

  protected override finished(): void {
    this.buf = EMPTY;
    this.busy = false;
  }
}
