/**
 * The operations of sockets over Node streams, each a `Parked` operation as
 * the backends' are: it tries in the task's fiber, parks among its socket's
 * waiters, and is woken by the stream's events (or its write callback).
 */
import { SocketClosed } from "../errors.js";
import { Parked, removeWaiter } from "../parked.js";
import type { StreamSocket } from "./socket.js";

/** An operation on a socket over a stream: a dump names the stream ("read stream TLSSocket 127.0.0.1:3000 ← …"). */
abstract class StreamOp<T> extends Parked<T> {
  constructor(
    label: string,
    protected readonly sock: StreamSocket,
  ) {
    super(label);
  }

  override describe(): string {
    return `${super.describe()} ${this.sock.describeStream()}`;
  }
}

/** `read(sock, buf, off, len)`: bytes the stream has, 0 at its end. */
export class StreamRead extends StreamOp<number> {
  constructor(
    sock: StreamSocket,
    private readonly buf: Uint8Array,
    private readonly off: number,
    private readonly len: number,
  ) {
    super("read", sock);
  }

  protected attempt(): boolean {
    const n = this.sock.take(this.buf, this.off, this.len);
    if (n < 0) return false;
    this.value = n;
    return true;
  }

  protected wait(): void {
    this.sock.readers.push(this);
  }

  protected unwait(): void {
    removeWaiter(this.sock.readers, this);
  }
}

/**
 * `write(sock, buf, off, len)`: handed to the stream, done once the stream
 * took the bytes (at once, or when its write callback came).
 */
export class StreamWrite extends StreamOp<void> {
  private started = false;
  private done = false;
  private error: Error | null = null;
  private readonly written = (error?: Error | null): void => {
    this.done = true;
    this.error = error ?? null;
    removeWaiter(this.sock.writers, this);
    this.ready();
  };

  constructor(
    sock: StreamSocket,
    private readonly buf: Uint8Array,
    private readonly off: number,
    private readonly len: number,
  ) {
    super("write", sock);
  }

  protected attempt(): boolean {
    const s = this.sock;
    if (!this.started) {
      this.started = true;
      if (s.write(this.buf, this.off, this.len, this.written)) return true;
    }
    if (this.done) {
      if (this.error !== null) throw s.state === "closed" ? new SocketClosed("write()") : s.causeOf(this.error);
      return true;
    }
    s.checkWriting();
    return false;
  }

  protected wait(): void {
    this.sock.writers.push(this);
  }

  protected unwait(): void {
    removeWaiter(this.sock.writers, this);
  }
}

/** `close(sock)`: begins closing, then waits until the stream emitted `'close'`. */
export class StreamClose extends StreamOp<void> {
  private started = false;

  constructor(sock: StreamSocket) {
    super("close", sock);
  }

  protected attempt(): boolean {
    if (!this.started) {
      this.started = true;
      this.sock.closeNow();
    }
    return this.sock.gone;
  }

  protected wait(): void {
    this.sock.closers.push(this);
  }

  protected unwait(): void {
    removeWaiter(this.sock.closers, this);
  }
}
