/**
 * The reusable shape of a read or write operation: a `Parked` over
 * `buf[off, off + len)` that a socket keeps and hands out again while it is
 * idle, so that the read/write path allocates nothing per call.
 */
import { Parked } from "./parked.js";

const EMPTY = new Uint8Array(0);

/**
 * A {@link Parked} operation on `buf[off, off + len)`, made to be kept by its
 * socket and reused: `init` prepares it for one call (and claims it); once
 * it completed or failed it drops the buffer, so that a kept operation holds
 * no caller's memory. A socket hands out a fresh one while its kept one is
 * `busy` (two reads at once, from two tasks).
 *
 * @example
 * ```ts
 * class MyReadOp extends BufferOp<number> {
 *   constructor(private sock: MySocket) { super("read"); }
 *   protected attempt() {
 *     const n = this.sock.take(this.buf, this.off, this.len); // -1: nothing yet
 *     if (n < 0) return false;
 *     this.value = n;
 *     return true;
 *   }
 *   protected wait() { this.sock.addReader(this); }
 *   protected leave() { this.sock.leaveReader(this); }
 * }
 * // in the backend (a socket record keeps its read in `keptRead`):
 * read(sock, buf, off, len) {
 *   let op = (sock.keptRead ??= new MyReadOp(sock));
 *   if (op.busy) op = new MyReadOp(sock);
 *   return op.init(buf, off, len);
 * }
 * ```
 * @throws whatever {@link Parked} throws when run: `Cancelled`, `Timeout`, what `attempt` throws.
 */
export abstract class BufferOp<T> extends Parked<T> {
  protected buf: Uint8Array = EMPTY;
  protected off = 0;
  protected len = 0;

  /**
   * Prepares the operation for one call over `buf[off, off + len)`.
   * Override it to reset more state, calling `super.init`.
   * @throws never
   */
  init(buf: Uint8Array, off: number, len: number): this {
    this.buf = buf;
    this.off = off;
    this.len = len;
    return this.claim();
  }

  protected override finished(): void {
    this.buf = EMPTY;
  }
}
