/**
 * `read` of a socket over a Node stream, a `Parked` operation as the
 * backends' are: it tries in the task's fiber, parks among its socket's
 * readers, and is woken by the stream's events. Its writes and closes are
 * the kit's (`NodeWriteOp`, `CloseOp`).
 */
import { BufferOp } from "../backend/buffer-op.js";
import type { StreamSocket } from "./socket.js";

/** `read(sock, buf, off, len)`: bytes the stream has, 0 at its end. */
export class StreamRead extends BufferOp<number> {
  constructor(private readonly sock: StreamSocket) {
    super("read");
  }

  protected attempt(): boolean {
    const n = this.sock.take(this.buf, this.off, this.len);
    if (n < 0) return false;
    this.value = n;
    return true;
  }

  protected wait(): void {
    this.sock.addReader(this);
  }

  protected leave(): void {
    this.sock.leaveReader(this);
  }

  /** "read stream TLSSocket 127.0.0.1:3000 ← …" (a dump). */
  override describe(): string {
    return `${super.describe()} ${this.sock.where()}`;
  }
}
