/**
 * A socket over a Node stream (what `fromStream` makes): the stream, and the
 * operations parked on it (`ops.ts`), woken by the stream's events. Each
 * event wakes every waiter of its kind, and each tries again in its own
 * fiber (edge-triggered, as in the backends: a cancelled waiter leaves
 * nothing behind and loses nothing). Nothing here depends on the run's
 * backend.
 */
import type { Readable, Writable } from "node:stream";
import type { ShutdownCommand, Socket, SocketBackend, SocketState } from "../backend.js";
import { SocketClosed, systemError } from "../errors.js";
import { type Parked, wakeAll } from "../parked.js";

/**
 * What `fromStream` adapts: a Node `Readable`, `Writable` or `Duplex` (a
 * `net.Socket`, a `tls.TLSSocket`, child process stdio, `fs` streams, HTTP
 * bodies and responses).
 *
 * @example
 * ```ts
 * const s: NodeStream = child.stdout;
 * ```
 */
export type NodeStream = Readable | Writable;

/** The members of a Node stream the socket uses: each side's are there only when it has that side. */
type AnyStream = Readable &
  Writable & {
    /** Set once the stream was destroyed and emitted 'close' (Node ≥ 18; `undefined` on legacy streams). */
    readonly closed?: boolean;
    /** A Duplex's: whether its writable side outlives the end of its readable side. */
    allowHalfOpen?: boolean;
  };

/** The stream ended without its end: destroyed by its owner, or by a peer that left without one. */
function prematureClose(syscall: string): NodeJS.ErrnoException {
  const error = new Error(`${syscall}(): the Node stream was destroyed before its end`) as NodeJS.ErrnoException;
  error.code = "ERR_STREAM_PREMATURE_CLOSE";
  error.syscall = syscall;
  return error;
}

/** @internal A socket over a Node stream. */
export class StreamSocket implements Socket {
  readonly kind = "stream";
  state: SocketState = "connected";
  /** The stream emitted `'close'`: no event will come any more, and the socket's listeners are gone. */
  gone: boolean;
  private sendShut = false;
  private receiveShut = false;
  readonly readers: Parked<unknown>[] = [];
  readonly writers: Parked<unknown>[] = [];
  readonly closers: Parked<unknown>[] = [];
  private readonly stream: AnyStream;
  private readonly onReadable = (): void => wakeAll(this.readers);
  /** Keeps the stream's errors away from the process: they are the operations' (see `take`, `write`). */
  private readonly onError = (): void => {
    wakeAll(this.readers);
    wakeAll(this.writers);
  };
  private readonly onClose = (): void => {
    this.gone = true;
    this.detach();
    wakeAll(this.readers);
    wakeAll(this.writers);
    wakeAll(this.closers);
  };

  /** "stream TLSSocket 127.0.0.1:3000 ← 127.0.0.1:51234", or "stream Socket" for a pipe (a dump). */
  describeStream(): string {
    const { localAddress, localPort, remoteAddress, remotePort } = this.stream as unknown as Partial<Record<string, unknown>>;
    const kind = `stream ${this.stream.constructor?.name || "(anonymous)"}`;
    if (typeof remoteAddress !== "string") return kind;
    return `${kind} ${String(localAddress)}:${String(localPort)} ← ${remoteAddress}:${String(remotePort)}`;
  }

  constructor(
    stream: NodeStream,
    /** The stream has a readable side (`read`). */
    readonly readable: boolean,
    /** The stream has a writable side (`write`, `end`). */
    readonly writable: boolean,
    readonly backend: SocketBackend,
  ) {
    this.stream = stream as AnyStream;
    this.gone = this.stream.closed === true;
    if (this.gone) return;
    // Half-open, as sockets are: the peer's end does not end this side (a
    // Duplex made with allowHalfOpen: false would end it once read to its end).
    if (readable && writable) this.stream.allowHalfOpen = true;
    if (readable) {
      // A 'readable' listener puts the stream in paused mode: the socket reads it.
      stream.on("readable", this.onReadable);
      stream.on("end", this.onReadable);
    }
    stream.on("error", this.onError);
    stream.on("close", this.onClose);
  }

  toString(): string {
    return `Socket(stream, ${this.state})`;
  }

  private detach(): void {
    const stream = this.stream;
    if (this.readable) {
      stream.off("readable", this.onReadable);
      stream.off("end", this.onReadable);
    }
    stream.off("error", this.onError);
    stream.off("close", this.onClose);
  }

  /**
   * Copies up to `len > 0` bytes the stream has buffered into `buf[off…]`.
   * Returns how many, 0 at the end of the stream, or -1 when nothing is
   * there yet.
   * @throws SocketClosed, the stream's error, or `ERR_STREAM_PREMATURE_CLOSE`.
   */
  take(buf: Uint8Array, off: number, len: number): number {
    if (this.state === "closed") throw new SocketClosed("read()");
    if (this.receiveShut) return 0;
    const stream = this.stream;
    // Never more than wanted: what a task has not taken stays in the stream,
    // whose 'end' comes once it is all taken.
    const buffered = stream.readableLength;
    const chunk = stream.read(buffered === 0 ? undefined : Math.min(len, buffered)) as unknown;
    if (chunk !== null) {
      if (!(chunk instanceof Uint8Array)) {
        throw new TypeError("read(): the Node stream gave text, not bytes: setEncoding() was called on it after fromStream()");
      }
      if (chunk.length > len) stream.unshift(chunk.subarray(len));
      const n = Math.min(len, chunk.length);
      buf.set(n === chunk.length ? chunk : chunk.subarray(0, n), off);
      return n;
    }
    if (stream.readableEnded) return 0;
    if (stream.errored) throw stream.errored;
    if (this.gone || stream.destroyed) throw prematureClose("read");
    return -1;
  }

  /**
   * Hands `buf[off, off + len)` to the stream. Returns true when the stream
   * took it at once (its buffer is empty again: `buf` may be reused), false
   * when `written` will say.
   * @throws SocketClosed, `EPIPE` after `shutdown` or once the stream ended, the stream's error.
   */
  write(buf: Uint8Array, off: number, len: number, written: (error?: Error | null) => void): boolean {
    this.checkWritable();
    const stream = this.stream;
    stream.write(off === 0 && len === buf.length ? buf : buf.subarray(off, off + len), written);
    if (stream.writableLength !== 0) return false;
    if (stream.errored) throw stream.errored; // failed at once (EPIPE…)
    return true;
  }

  /**
   * What a write whose callback got `error` failed of: the stream's own
   * error when it has one, as the callback's may only follow from it (a
   * `tls.TLSSocket` destroyed for a refused certificate calls its pending
   * write back with `EBADF` on Node ≥ 22).
   */
  causeOf(error: Error): Error {
    return this.stream.errored ?? error;
  }

  /**
   * For a write still waiting for its callback.
   * @throws SocketClosed when the socket was closed; the stream's error (or `EPIPE`) once it is gone, as it may never call back.
   */
  checkWriting(): void {
    if (this.state === "closed") throw new SocketClosed("write()");
    if (this.gone) throw this.stream.errored ?? systemError("EPIPE", "write", "the Node stream closed before the bytes were written");
  }

  private checkWritable(): void {
    if (this.state === "closed") throw new SocketClosed("write()");
    if (this.sendShut) throw systemError("EPIPE", "write", "the socket was shut down for sending");
    const stream = this.stream;
    if (stream.errored) throw stream.errored;
    if (stream.writableEnded) throw systemError("EPIPE", "write", "the Node stream has ended (end() was called on it)");
    if (stream.destroyed) throw systemError("EPIPE", "write", "the Node stream is destroyed");
  }

  /** `shutdown`: `"send"` ends the writable side (`end()`); `"receive"` makes reads return 0. */
  shutdown(how: ShutdownCommand): void {
    const stream = this.stream;
    if (how !== "receive" && !this.sendShut) {
      this.sendShut = true;
      if (this.writable && !stream.writableEnded && !stream.destroyed) stream.end();
    }
    if (how !== "send" && !this.receiveShut) {
      this.receiveShut = true;
      wakeAll(this.readers);
    }
  }

  /** Begins closing: state `closed`, every waiter woken (they fail with `SocketClosed`), the stream destroyed. */
  closeNow(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    wakeAll(this.readers);
    wakeAll(this.writers);
    if (!this.gone) this.stream.destroy();
  }

  /** The stream itself, for `getsockname`. */
  get nodeStream(): NodeStream {
    return this.stream;
  }

  /** `using`: begins closing, as an ownership finaliser does. */
  [Symbol.dispose](): void {
    this.closeNow();
  }
}
